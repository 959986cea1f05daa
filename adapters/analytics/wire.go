package analytics

import (
	"time"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/ports"
)

// ProviderSet is the in-memory counter of the public pages' activity, bound to its port.
var ProviderSet = wire.NewSet(
	ProvideCounter, wire.Bind(new(ports.FormActivity), new(*Counter)),
)

// Window is how long a page's start is remembered (the render token's lifetime).
type Window time.Duration

// ProvideCounter starts a counter that writes to store every DefaultFlushInterval; the cleanup
// writes what is left (at shutdown, after the server drained).
func ProvideCounter(store ports.FormStatsRepository, log *zap.Logger, window Window) (*Counter, func()) {
	c := New(store, log.Named("form_stats"), time.Duration(window))
	stop := c.Start(DefaultFlushInterval, 10*time.Second)
	return c, stop
}
