package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/delivery/deliverytest"
)

func TestURLChecker(t *testing.T) {
	res := deliverytest.Resolver{"hooks.example.com": {"93.184.216.34"}, "internal.example.com": {"10.1.2.3"}}
	strict := delivery.URLChecker{Resolver: res}
	lax := delivery.URLChecker{AllowPrivate: true, Resolver: res}
	ctx := context.Background()
	for _, c := range []struct {
		url       string
		strict    string // "" means accepted
		lax       string
		forbidden bool
	}{
		{"https://hooks.example.com/in", "", "", false},
		{"https://93.184.216.34/in", "", "", false},
		{"https://10.0.0.1/in", "private", "", true},
		{"https://internal.example.com/in", "private", "", true},
		{"https://127.0.0.1/", "loopback", "", true},
		{"http://hooks.example.com/in", "https", "https", false},
		{"https://unknown.example.com/", "could not be resolved", "could not be resolved", false},
	} {
		err := strict.CheckURL(ctx, c.url)
		if (c.strict == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.strict)) {
			t.Errorf("strict %s: %v, want %q", c.url, err, c.strict)
		}
		if c.forbidden && !errors.Is(err, delivery.ErrForbiddenAddress) {
			t.Errorf("strict %s: %v is not ErrForbiddenAddress", c.url, err)
		}
		err = lax.CheckURL(ctx, c.url)
		if (c.lax == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.lax)) {
			t.Errorf("allow private %s: %v, want %q", c.url, err, c.lax)
		}
	}
}
