package crypto

import (
	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is what is built on the keyring (the data key cipher, the blind index of
// respondents' emails) and the account secrets (password hashes, TOTP), bound to their ports.
// The keyring itself and the IP hasher's key come from configuration.
var ProviderSet = wire.NewSet(
	NewCipher, wire.Bind(new(ports.Cipher), new(*Cipher)),
	NewKeyringBlindIndex, wire.Bind(new(ports.BlindIndex), new(*BlindIndex)),
	NewPasswordHasher, wire.Bind(new(ports.PasswordHasher), new(*PasswordHasher)),
	wire.Struct(new(TOTP)), wire.Bind(new(ports.TOTP), new(TOTP)),
)

// NewKeyringBlindIndex keys the email index of respondents' privacy requests from the primary
// master key; a new master key rebuilds the index (the backfill notices the key's new version).
func NewKeyringBlindIndex(ring *Keyring) *BlindIndex {
	return NewBlindIndex(ring.Primary())
}
