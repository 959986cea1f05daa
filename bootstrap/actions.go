package bootstrap

import (
	"fmt"
	"sort"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/ports"
)

// provideActionRunners builds one runner per registered workflow action type, keyed by type:
// Formward's own (builtins.go) and those of the extensions compiled in (docs/extending.md).
func provideActionRunners(cfg Config, sender ports.Sender, m *metrics.Metrics, log *zap.Logger) (map[string]ports.ActionRunner, error) {
	breaker := extend.BreakerOptions{Cooldown: cfg.BreakerCooldown}
	if watch := watchActionBreakers(m); watch != nil {
		breaker.Created = func(b any) {
			if set, ok := b.(*actionkit.Breakers); ok {
				watch(set)
			}
		}
	}
	if cfg.BreakerFailures > 0 {
		breaker.Failures = uint32(cfg.BreakerFailures)
	}
	if log == nil {
		log = zap.NewNop()
	}
	factories := extend.Actions()
	names := make([]string, 0, len(factories))
	for name := range factories {
		names = append(names, name)
	}
	sort.Strings(names) // the first error reported is the same at every start
	runners := map[string]ports.ActionRunner{}
	for _, name := range names {
		r, err := factories[name](extend.ActionDeps{
			Sender: sender, CAFile: cfg.WebhookCAFile, Timeout: cfg.DeliveryTimeout, Breaker: breaker,
			Getenv: cfg.Getenv, Logger: log.Named("action").With(zap.String("action_type", name)),
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if r.Type() != name {
			return nil, fmt.Errorf("action type %s: its runner says it is %q", name, r.Type())
		}
		runners[name] = r
	}
	return tracing.Runners(runners), nil
}
