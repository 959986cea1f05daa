package delivery

import (
	"context"

	"github.com/formward/formward/ports"
)

// URLChecker applies CheckURL when an endpoint is registered. A nil Resolver uses the system's.
type URLChecker struct {
	// AllowPrivate lifts the public-address rule (FORMWARD_ALLOW_PRIVATE_DESTINATIONS); the
	// HTTPS rule stays.
	AllowPrivate bool
	Resolver     Resolver
}

var _ ports.URLChecker = URLChecker{}

// CheckURL returns a *URLError whose message is meant for the API caller, or nil.
func (c URLChecker) CheckURL(ctx context.Context, rawURL string) error {
	return CheckURL(ctx, rawURL, c.AllowPrivate, c.Resolver)
}
