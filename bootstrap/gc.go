package bootstrap

import (
	"os"
	"runtime/debug"

	"go.uber.org/zap"
)

// serverGCPercent is the garbage collector's target of the long-running roles (serve, relay,
// worker) when GOGC is not set: the heap may grow to 5× what survived the last collection
// before the next one, instead of Go's default 2×. Their live heap is small (tens of MB) and
// each request allocates a few KB that die at once, so with the default the collector ran
// back to back under load: in a CPU profile of serve under make bench it took about 12% of the
// server's CPU, about 5% with this target (docs/performance.md). GOGC, and GOMEMLIMIT for a
// container's memory limit, still decide when set.
const serverGCPercent = 400

// tuneGC applies serverGCPercent unless the operator set GOGC.
func tuneGC(log *zap.Logger) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(serverGCPercent)
	log.Debug("garbage collector target", zap.Int("gc_percent", serverGCPercent))
}
