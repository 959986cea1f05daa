package delivery

import (
	"fmt"

	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the signing, SSRF-safe HTTPS client with its circuit breakers, seen through
// ports.Sender by the delivery engine and the workflow actions; the cleanup closes it.
var ProviderSet = wire.NewSet(
	ProvideSender, wire.Bind(new(ports.Sender), new(Sender)),
)

// ClientCreated is told about the client once it is made (metrics count its breakers); nil
// is allowed.
type ClientCreated func(*Client)

// ProvideSender makes the client of o, tells created about it, and closes it on cleanup.
func ProvideSender(o Options, created ClientCreated) (Sender, func(), error) {
	c, err := NewClient(o)
	if err != nil {
		return Sender{}, nil, fmt.Errorf("webhook client: %w", err)
	}
	if created != nil {
		created(c)
	}
	return Sender{Client: c}, c.Close, nil
}
