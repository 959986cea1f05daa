package bootstrap

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
)

// serve runs the API until the context ends (SIGINT/SIGTERM), then drains requests in flight.
func (c *cli) serve(ctx context.Context) error {
	return c.withServeProcess(ctx, func(sp *ServeProcess) error {
		rt := sp.Runtime
		if (c.cfg.TLSCertFile == "") != (c.cfg.TLSKeyFile == "") {
			return errors.New("set both --tls-cert-file and --tls-key-file, or neither")
		}
		router := rt.Router(c.cfg)
		registry, err := rt.MountPublicForms(c.cfg, router)
		if err != nil {
			return err
		}
		if c.cfg.MetricsAddr != "" {
			go serveMetrics(c.cfg.MetricsAddr, registry, rt.Log)
		}
		srv := &http.Server{
			Handler:           httpapi.Compress(router),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          zap.NewStdLog(rt.Log.Named("http")),
			TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		}
		ln, err := net.Listen("tcp", c.cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", c.cfg.HTTPAddr, err)
		}
		if c.cfg.DebugAddr != "" {
			go serveDebug(c.cfg.DebugAddr, rt.Log)
		}
		embedded := len(c.cfg.Brokers()) == 0
		if embedded {
			// No Kafka: relay, fan-out and deliveries run here, stopped after the API drained.
			stopPipeline := sp.Pipeline.Start()
			defer func() {
				stopPipeline()
				rt.Log.Info("event pipeline stopped")
			}()
		}
		errc := make(chan error, 1)
		go func() {
			if c.cfg.TLSCertFile != "" {
				errc <- srv.ServeTLS(ln, c.cfg.TLSCertFile, c.cfg.TLSKeyFile)
			} else {
				errc <- srv.Serve(ln)
			}
		}()
		rt.Log.Info("formward serving", zap.String("addr", ln.Addr().String()), zap.String("version", Version),
			zap.String("database", rt.DB.Dialect()), zap.Bool("tls", c.cfg.TLSCertFile != ""), zap.Bool("embedded_pipeline", embedded))
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		rt.Log.Info("shutting down", zap.Duration("timeout", c.cfg.ShutdownTimeout))
		sctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		rt.Log.Info("stopped")
		return nil
	})
}

// serveDebug exposes pprof on a separate listener, never on the API address.
func serveDebug(addr string, log *zap.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("debug listener", zap.String("addr", addr))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Warn("debug listener stopped", zap.Error(err))
	}
}
