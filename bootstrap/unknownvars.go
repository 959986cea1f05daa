package bootstrap

import (
	"context"
	"os"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// testVariablePrefix marks the variables of Formward's own tests and benchmarks
// (FORMWARD_TEST_POSTGRES_URL, …): the tests start the binary from an environment that holds
// them, and they are no setting of the binary, so they are not warned about.
const testVariablePrefix = "FORMWARD_TEST_"

// unknownVariable is a FORMWARD_ variable that no command reads, with the known name closest
// to it (the likely intended one).
type unknownVariable struct {
	name, closest string
}

// unknownVariables lists, sorted by name, the FORMWARD_ variables of environ (NAME=value
// entries) that are not in known, except the tests' own.
func unknownVariables(environ []string, known map[string]bool) []unknownVariable {
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	slices.Sort(names) // ties go to the first name in order, so the output is stable
	var out []unknownVariable
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "FORMWARD_") || strings.HasPrefix(name, testVariablePrefix) || known[name] {
			continue
		}
		closest, best := "", -1
		for _, k := range names {
			if d := editDistance(name, k); best < 0 || d < best {
				closest, best = k, d
			}
		}
		out = append(out, unknownVariable{name: name, closest: closest})
	}
	slices.SortFunc(out, func(a, b unknownVariable) int { return strings.Compare(a.name, b.name) })
	return slices.CompactFunc(out, func(a, b unknownVariable) bool { return a.name == b.name })
}

// warnUnknownVariables logs a warning for each unknown FORMWARD_ variable of environ, with the
// closest known name: a misspelt setting (FORMWARD_KAFKA_BROKER) is otherwise silently
// ignored. Values are never logged: the variable may hold a secret.
func warnUnknownVariables(log *zap.Logger, environ []string, known map[string]bool) {
	for _, v := range unknownVariables(environ, known) {
		log.Warn("unknown environment variable, ignored", zap.String("variable", v.name), zap.String("closest_known", v.closest))
	}
}

// editDistance is the Levenshtein distance between a and b (single-byte insertions, deletions
// and substitutions; variable names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// startLogger is the logger of a process that starts: its first lines are the warnings about
// unknown variables.
func (c *cli) startLogger() (*zap.Logger, func(), error) {
	log, flush, err := newLogger(c.cfg.LogLevel)
	if err != nil {
		return nil, nil, err
	}
	warnUnknownVariables(log, os.Environ(), c.known)
	return log, flush, nil
}

// startObserved starts a process's logger (startLogger) and its tracing as role; stop ends the
// tracing, then flushes the log.
func (c *cli) startObserved(ctx context.Context, role string) (log *zap.Logger, stop func(), err error) {
	log, flush, err := c.startLogger()
	if err != nil {
		return nil, nil, err
	}
	tuneGC(log)
	stopTracing, err := startTracing(ctx, role, log)
	if err != nil {
		flush()
		return nil, nil, err
	}
	return log, func() { stopTracing(); flush() }, nil
}
