package persistence

import (
	"cmp"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// The closing rules that depend on what is stored are checked by the group committer inside
// the transaction that stores the submissions, so concurrent posts cannot pass them together:
// a form with max_submissions is locked and its count read there (never N+1 stored), and a
// one-per-email key is claimed with an insert into form_email_keys, whose primary key lets
// only one of two equal answers in. Batches without either pay one loop over the batch.

// guardClosing returns the items of the batch the closing rules let through; the others are
// marked refused (ports.ErrEmailUsed, domain.ErrFormClosed) and left out.
func (d *DB) guardClosing(tx *gorm.DB, batch []*pendingAdd) ([]*pendingAdd, error) {
	var keyed, limited bool
	for _, p := range batch {
		keyed = keyed || p.emailKey != ""
		limited = limited || p.limit > 0
	}
	if !keyed && !limited {
		return batch, nil
	}
	var err error
	if keyed {
		if batch, err = claimEmailKeys(tx, batch); err != nil {
			return nil, err
		}
	}
	if limited {
		if batch, err = d.applyLimits(tx, batch); err != nil {
			return nil, err
		}
	}
	return batch, nil
}

// claimEmailKeys inserts the batch's one-per-email keys and keeps the items whose key this
// insert claimed (and those without a key). Rows go in (form, key) order, so two committers
// never wait on each other's keys in opposite orders.
func claimEmailKeys(tx *gorm.DB, batch []*pendingAdd) ([]*pendingAdd, error) {
	type claim struct{ form, key string }
	first := map[claim]*pendingAdd{}
	var claims []claim
	for _, p := range batch {
		if p.emailKey == "" {
			continue
		}
		c := claim{p.sub.FormID, p.emailKey}
		if _, dup := first[c]; dup {
			continue
		}
		first[c] = p
		claims = append(claims, c)
	}
	slices.SortFunc(claims, func(a, b claim) int { return cmp.Or(cmp.Compare(a.form, b.form), cmp.Compare(a.key, b.key)) })
	var sb strings.Builder
	sb.WriteString("INSERT INTO form_email_keys (form_id, email_key, submission_id) VALUES ")
	args := make([]any, 0, len(claims)*3)
	for i, c := range claims {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?)")
		args = append(args, c.form, c.key, first[c].sub.ID)
	}
	sb.WriteString(" ON CONFLICT (form_id, email_key) DO NOTHING RETURNING submission_id")
	var won []string
	if err := tx.Raw(sb.String(), args...).Scan(&won).Error; err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(won))
	for _, id := range won {
		kept[id] = true
	}
	out := make([]*pendingAdd, 0, len(batch))
	for _, p := range batch {
		if p.emailKey != "" && !kept[p.sub.ID] {
			p.refused = ports.ErrEmailUsed
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// applyLimits locks each limited form of the batch (in ID order), reads its count and keeps
// as many of its limited items as the form has room for, in queue order. The batch's
// unlimited items of the same form (API submissions, never refused) take room first. Items
// turned away give back the email keys they claimed.
func (d *DB) applyLimits(tx *gorm.DB, batch []*pendingAdd) ([]*pendingAdd, error) {
	room := map[string]int64{}
	var forms []string
	for _, p := range batch {
		if p.limit > 0 {
			if _, seen := room[p.sub.FormID]; !seen {
				room[p.sub.FormID] = p.limit
				forms = append(forms, p.sub.FormID)
			}
		}
	}
	slices.Sort(forms)
	lock := "SELECT id FROM forms WHERE id IN ? ORDER BY id"
	if d.dialect == DialectPostgres {
		// Committers of other shards wait here for this one's commit, then read its count.
		// NO KEY UPDATE leaves inserts of unlimited submissions (their foreign key check) free.
		lock += " FOR NO KEY UPDATE"
	} // SQLite: the transaction holds the only write lock already (BEGIN IMMEDIATE).
	var locked []string
	if err := tx.Raw(lock, forms).Scan(&locked).Error; err != nil {
		return nil, err
	}
	var counts []struct {
		FormID string
		N      int64
	}
	if err := tx.Raw("SELECT form_id, COALESCE(SUM(n), 0) AS n FROM form_counters WHERE form_id IN ? GROUP BY form_id", forms).Scan(&counts).Error; err != nil {
		return nil, err
	}
	for _, c := range counts {
		room[c.FormID] -= c.N
	}
	for _, p := range batch {
		if p.limit == 0 {
			if _, limited := room[p.sub.FormID]; limited {
				room[p.sub.FormID]--
			}
		}
	}
	out := make([]*pendingAdd, 0, len(batch))
	var giveBack []string
	for _, p := range batch {
		if p.limit > 0 {
			if room[p.sub.FormID] <= 0 {
				p.refused = domain.ErrFormClosed
				if p.emailKey != "" {
					giveBack = append(giveBack, p.sub.ID)
				}
				continue
			}
			room[p.sub.FormID]--
		}
		out = append(out, p)
	}
	if len(giveBack) > 0 {
		if err := tx.Exec("DELETE FROM form_email_keys WHERE submission_id IN ?", giveBack).Error; err != nil {
			return nil, err
		}
	}
	return out, nil
}
