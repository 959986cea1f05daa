package application_test

import (
	"errors"
	"testing"

	"github.com/formward/formward/application"
	"github.com/formward/formward/domain/apikey"
)

// Every use case checks the caller's permission through Principal.Require: a read-only key
// reads, a read-write key also writes, and only an admin key manages the account.
func TestPrincipalRequire(t *testing.T) {
	for _, tc := range []struct {
		scope   apikey.Scope
		allowed []apikey.Permission
		refused []apikey.Permission
	}{
		{apikey.ScopeReadOnly, []apikey.Permission{apikey.PermRead}, []apikey.Permission{apikey.PermWrite, apikey.PermManageAccount}},
		{apikey.ScopeReadWrite, []apikey.Permission{apikey.PermRead, apikey.PermWrite}, []apikey.Permission{apikey.PermManageAccount}},
		{apikey.ScopeAdmin, []apikey.Permission{apikey.PermRead, apikey.PermWrite, apikey.PermManageAccount}, nil},
	} {
		p := application.Principal{KeyID: "key_1", WorkspaceID: "wsp_1", Scope: tc.scope}
		for _, perm := range tc.allowed {
			if err := p.Require(perm); err != nil {
				t.Errorf("%s refused %s: %v", tc.scope, perm, err)
			}
		}
		for _, perm := range tc.refused {
			if err := p.Require(perm); !errors.Is(err, application.ErrForbidden) {
				t.Errorf("%s given %s: %v, want ErrForbidden", tc.scope, perm, err)
			}
		}
	}
}
