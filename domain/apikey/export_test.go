package apikey

import (
	"slices"

	"github.com/formward/formward/domain/access"
)

// Permissions lists what the scope grants (nothing for an unknown scope), for the tests to
// compare the table with the policy.
func (s Scope) Permissions() []access.Permission { return slices.Clone(scopePermissions[s]) }
