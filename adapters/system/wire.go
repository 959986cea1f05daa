package system

import (
	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the wall clock and the ID generator, bound to their ports.
var ProviderSet = wire.NewSet(
	wire.Struct(new(Clock)), wire.Bind(new(ports.Clock), new(Clock)),
	NewIDs, wire.Bind(new(ports.IDs), new(*IDs)),
)
