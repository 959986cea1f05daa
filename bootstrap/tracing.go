package bootstrap

import (
	"context"
	"os"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/tracing"
)

// startTracing turns OpenTelemetry tracing on for a process role when the standard OTEL_
// variables name an OTLP endpoint (docs/tracing.md), and returns what flushes the spans at
// exit. A setting it cannot use (an unsupported OTLP protocol, a malformed endpoint) stops
// the process with its error.
func startTracing(ctx context.Context, role string, log *zap.Logger) (stop func(), err error) {
	shutdown, err := tracing.Setup(ctx, os.Getenv, role, Version)
	if err != nil {
		return nil, err
	}
	if !tracing.Active() {
		return func() {}, nil
	}
	log.Info("tracing on", zap.String("role", role))
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("flush traces", zap.Error(err))
		}
	}, nil
}

// serverTracing is the router's tracing middleware: none when tracing is off, so an untraced
// request costs nothing.
func serverTracing() []gin.HandlerFunc {
	if !tracing.Active() {
		return nil
	}
	return []gin.HandlerFunc{tracing.Gin()}
}
