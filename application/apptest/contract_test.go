package apptest_test

import (
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/ports/porttest"
)

// TestRepositoryContract runs the contracts the persistence adapters pass against the fakes.
func TestRepositoryContract(t *testing.T) {
	porttest.Run(t, func(*testing.T) porttest.Repos {
		s := apptest.NewStore()
		return porttest.Repos{
			Workspaces: s.Workspaces, Keys: s.Keys, Forms: s.Forms, Submissions: s.Submissions,
			Users: s.Users, Memberships: s.Memberships, Sessions: s.Sessions, Tokens: s.Tokens, Flashes: s.Flashes,
			Audit: s.Audit, Throttle: s.Throttle, AccountMail: s.AccountMail, DataKeys: s.DataKeys,
			Webhooks: s.Webhooks, Deliveries: s.Deliveries, Workflows: s.Workflows, Integrations: s.Integrations, Runs: s.Runs,
			Columns: s.Columns,
		}
	})
}
