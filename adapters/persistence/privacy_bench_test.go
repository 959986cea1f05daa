package persistence_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// privacyLookupSeed is how many submissions, each from its own respondent, the privacy lookup
// benchmark searches.
const privacyLookupSeed = 100000

// BenchmarkPrivacyLookup finds one respondent's submission among privacyLookupSeed by the
// blind index, as a privacy export or erase does first. On SQLite the index is kept in
// submission order (cheap for captures and retention), so a lookup reads it from end to end;
// on PostgreSQL it seeks.
func BenchmarkPrivacyLookup(b *testing.B) {
	for _, dialect := range []string{persistence.DialectSQLite, persistence.DialectPostgres} {
		b.Run(dialect, func(b *testing.B) {
			db := persistencetest.SQLite(b, nil)
			if dialect == persistence.DialectPostgres {
				db = persistencetest.Postgres(b)
			}
			r := newRepos(db)
			w := mustWorkspace(b, r, base)
			f := mustForm(b, r, w.ID(), base)
			if added, failed := addMany(b, r, f, base, privacyLookupSeed); failed > 0 || added != privacyLookupSeed {
				b.Fatalf("seeded %d, %d failed", added, failed)
			}
			ix := persistencetest.BlindIndex()
			privacy := persistence.NewPrivacyIndex(db, r.cipher, ix)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				email := fmt.Sprintf("respondent%d@example.com", (i*7919)%privacyLookupSeed)
				i++
				found, err := privacy.FindByEmail(ctx, w.ID(), ix.Email(w.ID(), email))
				if err != nil {
					b.Fatal(err)
				}
				if len(found) != 1 {
					b.Fatalf("%s found %d submissions, want 1", email, len(found))
				}
			}
		})
	}
}
