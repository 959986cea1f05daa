package bootstrap

import (
	"fmt"

	"github.com/formward/formward/domain/webhook"
)

// retryFlag parses --retry-delays / FORMWARD_RETRY_DELAYS into the schedule once, when the
// configuration is read, so a bad value stops the process at start and the engines share one value.
type retryFlag struct{ p *webhook.RetrySchedule }

func (f retryFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f retryFlag) Set(s string) error {
	sched, err := webhook.ParseRetrySchedule(s)
	if err != nil {
		return err
	}
	*f.p = sched
	return nil
}

func (retryFlag) Type() string { return "durations" }

// RetrySchedule is a retry schedule flag (comma-separated durations, default 30s,5m,30m,2h).
func (b *binder) RetrySchedule(p *webhook.RetrySchedule, name, usage string) {
	*p = webhook.DefaultRetrySchedule()
	if v, ok := b.env(name); ok {
		if err := (retryFlag{p}).Set(v); err != nil {
			b.fail(fmt.Errorf("%s: %w", envName(b.prefix+name), err))
		}
	}
	b.fs.Var(retryFlag{p}, name, b.usage(name, usage))
}
