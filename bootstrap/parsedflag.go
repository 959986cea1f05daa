package bootstrap

import (
	"fmt"
)

// parsedFlag is a flag whose text is parsed into its typed value once, when the configuration
// is read: a bad value stops the process at start, and every reader shares the parsed value.
type parsedFlag[T any] struct {
	p     *T
	text  *string
	parse func(string) (T, error)
	kind  string
}

// reportingFlag records a bad command-line value with the other configuration errors (named by
// its variable) instead of stopping at the first, so one start reports every bad setting.
type reportingFlag[T any] struct {
	parsedFlag[T]
	b    *binder
	name string
}

func (f reportingFlag[T]) Set(s string) error {
	if err := f.parsedFlag.Set(s); err != nil {
		f.b.fail(fmt.Errorf("%s (--%s): %w", envName(f.b.prefix+f.name), f.name, err))
	}
	return nil
}

func (f parsedFlag[T]) String() string {
	if f.text == nil {
		return ""
	}
	return *f.text
}

func (f parsedFlag[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.p, *f.text = v, s
	return nil
}

func (f parsedFlag[T]) Type() string { return f.kind }

// bindParsed registers a flag (and its FORMWARD_ variable) whose value parse turns into *p.
func bindParsed[T any](b *binder, p *T, name, def, kind, usage string, parse func(string) (T, error)) {
	text := new(string)
	f := parsedFlag[T]{p: p, text: text, parse: parse, kind: kind}
	if err := f.Set(def); err != nil {
		panic(fmt.Sprintf("default of --%s: %v", name, err))
	}
	if v, ok := b.env(name); ok {
		if err := f.Set(v); err != nil {
			b.fail(fmt.Errorf("%s: %w", envName(b.prefix+name), err))
		}
	}
	b.fs.Var(reportingFlag[T]{parsedFlag: f, b: b, name: name}, name, b.usage(name, usage))
	b.record(name, f.String)
}
