package actionkit

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// DefaultTimeout bounds one call to an integration API.
const DefaultTimeout = 10 * time.Second

// NewHTTPClient returns the client of an integration adapter (Slack, Google): a plain HTTPS
// client to operator-configured base URLs, trusting the system CAs plus extraCAFile (the
// FORMWARD_WEBHOOK_CA_FILE of self-hosted proxies and tests), not following redirects.
// Customer-supplied URLs never go through it; they take the SSRF-safe ports.Sender.
func NewHTTPClient(extraCAFile string, timeout time.Duration) (*http.Client, error) {
	roots, err := delivery.RootCAs(extraCAFile)
	if err != nil {
		return nil, fmt.Errorf("integration client: %w", err)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// Canceled is the outcome of an attempt given up because ctx ended (shutdown): a retryable
// failure that says nothing about the destination.
func Canceled(ctx context.Context) ports.ActionOutcome {
	return ports.ActionOutcome{Err: fmt.Errorf("action canceled: %w", context.Cause(ctx))}
}
