package bootstrap

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/httpkit"
)

// serve runs the API until the context ends (SIGINT/SIGTERM), then drains requests in flight.
func (c *cli) serve(ctx context.Context) error {
	return c.withServeProcess(ctx, func(sp *ServeProcess) error {
		rt := sp.Runtime
		handler, registry, err := newServeHandler(c.cfg, rt)
		if err != nil {
			return err
		}
		if c.cfg.MetricsAddr != "" {
			go serveMetrics(c.cfg.MetricsAddr, registry, nil, rt.Log)
		}
		srv := newPublicServer(handler, rt.Log)
		ln, err := listenPublic(c.cfg)
		if err != nil {
			return err
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
		stopRetention := startRetention(c.cfg, rt)
		defer stopRetention()
		// Password links queued by requests are sent here, after the answers, in both modes.
		stopAccountMail := startAccountMail(rt)
		defer stopAccountMail()
		stopBackups, err := startBackups(ctx, c.cfg, rt)
		if err != nil {
			return err
		}
		defer stopBackups()
		// The link is out before the first request is answered, so whoever waits for /readyz
		// finds it in the log.
		if err := announceSetup(ctx, c.cfg, rt); err != nil {
			// The API serves regardless; `formward users create` makes the first owner too.
			rt.Log.Error("no first-run setup link", zap.Error(err))
		}
		errc := make(chan error, 1)
		go func() {
			errc <- srv.Serve(ln)
		}()
		// Files an older version stored in plaintext are encrypted while the server runs.
		migrated := make(chan struct{})
		go func() {
			defer close(migrated)
			encryptPlaintextFiles(ctx, rt)
		}()
		defer func() { <-migrated }()
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

// newServeHandler is everything the public listener answers: the API, the public forms and
// the signed file links, behind the readiness tracker, with the capture routes measured. It
// returns the metrics registry, which is served on its own address only.
func newServeHandler(cfg Config, rt *Runtime) (http.Handler, *prometheus.Registry, error) {
	router := rt.Router(cfg)
	registry, err := rt.MountPublicForms(cfg, router)
	if err != nil {
		return nil, nil, err
	}
	if err := rt.MountDashboard(cfg, router); err != nil {
		return nil, nil, err
	}
	rd := newReadiness(rt)
	watchReadiness(rt.Metrics, rd)
	return rt.Metrics.CaptureRoutes(rd.wrap(httpkit.Compress(router))), registry, nil
}

// newPublicServer is the public listener's server: timeouts against slow clients, and the
// request-smuggling guard (a request with both Content-Length and Transfer-Encoding gets 400
// and a closed connection). Serve it on the listener of listenPublic.
func newPublicServer(handler http.Handler, log *zap.Logger) *http.Server {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	httpapi.GuardServer(srv)
	return srv
}

// listenPublic opens the public address, terminating TLS (1.2 or higher) when a certificate
// is configured, with every connection watched by the request-smuggling guard.
func listenPublic(cfg Config) (net.Listener, error) {
	var tlsConfig *tls.Config
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load TLS certificate: %w", err)
		}
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	return httpapi.GuardListener(ln, tlsConfig), nil
}

// metricsHandler serves the registry at /metrics, for the metrics listener only; with probes
// (relay and worker, which have no HTTP API) also /healthz and /readyz.
func metricsHandler(reg *prometheus.Registry, probes *roleProbes) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if probes != nil {
		probes.mount(mux)
	}
	return mux
}

// serveMetrics exposes the registry (and the probes, when set) on its own listener
// (FORMWARD_METRICS_ADDR).
func serveMetrics(addr string, reg *prometheus.Registry, probes *roleProbes, log *zap.Logger) {
	log.Info("metrics listener", zap.String("addr", addr))
	srv := &http.Server{Addr: addr, Handler: metricsHandler(reg, probes), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Warn("metrics listener stopped", zap.Error(err))
	}
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
