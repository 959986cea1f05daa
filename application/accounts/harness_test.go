package accounts_test

import (
	"testing"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

// newAccountsHarness is the accounts harness with the real password hasher (cheap
// parameters), TOTP and cipher.
func newAccountsHarness(t *testing.T) *apptest.AccountsHarness {
	return apptest.NewAccounts(t, apptest.Crypto{
		Passwords: crypto.NewPasswordHasherWithParams(crypto.Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}),
		TOTP:      crypto.TOTP{},
		Cipher: func(keys ports.DataKeyRepository, ids ports.IDs, clock ports.Clock) ports.Cipher {
			return crypto.NewCipher(crypto.NewKeyring(crypto.GenerateMasterKey()), keys, ids, clock)
		},
	})
}

// adaAtAcme is the accounts harness with a workspace, Acme, and its owner ada@example.com,
// whose password is goodPassword.
func adaAtAcme(t *testing.T) (h *apptest.AccountsHarness, acme string, ada *user.User) {
	t.Helper()
	h = newAccountsHarness(t)
	acme = h.AddWorkspace(t, "Acme")
	return h, acme, h.AddUser(t, "ada@example.com", goodPassword, acme)
}
