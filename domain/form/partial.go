package form

import (
	"fmt"
	"time"

	"github.com/formward/formward/domain"
)

// Partial is settings.partial: when Enabled, the public page keeps a respondent's progress in
// an encrypted draft that a resume link brings back for TTLDays after its last save.
type Partial struct {
	Enabled bool
	TTLDays int
}

// Draft lifetimes, in days.
const (
	DefaultDraftTTLDays = 30
	MinDraftTTLDays     = 1
	MaxDraftTTLDays     = 365
)

// TTL is how long a draft lives after its last save.
func (p Partial) TTL() time.Duration { return time.Duration(p.TTLDays) * 24 * time.Hour }

// checkPartial bounds ttl_days; 0 (settings made without it) is the default.
func checkPartial(vs *domain.Violations, p Partial) Partial {
	if p.TTLDays == 0 {
		p.TTLDays = DefaultDraftTTLDays
	}
	if p.TTLDays < MinDraftTTLDays || p.TTLDays > MaxDraftTTLDays {
		vs.Add("settings.partial.ttl_days", "out_of_range", TTLDaysMessage)
	}
	return p
}

// TTLDaysMessage explains the bounds of ttl_days.
var TTLDaysMessage = fmt.Sprintf("ttl_days must be %d to %d (days a saved response can be resumed)", MinDraftTTLDays, MaxDraftTTLDays)

// SavesDrafts reports whether the form keeps respondents' progress in drafts.
func (f *Form) SavesDrafts() bool { return f.settings.Partial.Enabled }
