package persistence_test

import (
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/ports/porttest"
)

// TestRepositoryContract runs the repository contracts the application's fakes also pass.
func TestRepositoryContract(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		r := newRepos(db)
		porttest.Run(t, func(*testing.T) porttest.Repos {
			return porttest.Repos{
				Workspaces: r.workspaces, Keys: r.keys, Forms: r.forms, Submissions: r.submissions,
				Users: persistence.NewUserRepository(db), Memberships: persistence.NewMembershipRepository(db),
				Sessions: persistence.NewSessionRepository(db), Tokens: persistence.NewUserTokenRepository(db),
				Flashes: persistence.NewFlashRepository(db),
				Audit:   persistence.NewAuditLog(db), Throttle: persistence.NewSignInThrottle(db),
				AccountMail: persistence.NewAccountMailOutbox(db), DataKeys: r.dataKeys,
				Webhooks: r.webhooks, Deliveries: r.deliveries,
				Workflows: persistence.NewWorkflowRepository(db, r.cipher), Integrations: persistence.NewIntegrationRepository(db, r.cipher), Runs: persistence.NewRunRepository(db, r.cipher),
				Columns: persistence.NewResponseColumnsRepository(db),
			}
		})
	})
}
