package bus

import (
	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the in-process bus of the embedded mode, bound to the event publisher port.
var ProviderSet = wire.NewSet(
	NewDirect, wire.Bind(new(ports.EventPublisher), new(*Direct)),
)
