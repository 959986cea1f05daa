// Package submission is the submission aggregate: one respondent's answers to one form.
package submission

import (
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/text"
)

// Source says where a submission came from.
type Source string

// Sources: "form" for the public form URL, "api" for POST /v1/forms/{id}/submissions.
const (
	SourceAPI  Source = "api"
	SourceForm Source = "form"
)

// UTMKeys are the campaign parameters kept from the form's URL.
var UTMKeys = []string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}

// Metadata describes how a submission arrived. IPHash is the keyed one-way hash, never the IP.
type Metadata struct {
	IPHash    *string
	UserAgent *string
	Referrer  *string
	Source    Source
	UTM       map[string]string
	// ReplyTo and Subject come with a form-backend post (_replyto, _subject) for the owner's
	// notification; nil otherwise.
	ReplyTo *string
	Subject *string
	// Language is the public page's language on a form with languages (a tag of the form's
	// languages); nil otherwise.
	Language *string
	// Score is the sum of the scores of the answered options (scores.go); nil for a form
	// without scores.
	Score *float64
}

// Submission is the aggregate root.
type Submission struct {
	id          string
	workspaceID string
	formID      string
	data        map[string]Value
	metadata    Metadata
	submittedAt time.Time
	updatedAt   time.Time
	// emails are the normalised email answers, known once the submission was checked against
	// its form (emailsKnown); the privacy index is built from them.
	emails      []string
	emailsKnown bool
	// formVersion is the version of the form the submission answered.
	formVersion int
}

// New validates the input against the form and builds a submission received at now. Input
// names each field by its ID or its key; the submission's data is keyed by field ID.
func New(id string, f *form.Form, input map[string]Input, meta Metadata, now time.Time) (*Submission, error) {
	switch meta.Source {
	case SourceAPI:
		if err := f.AcceptsAPISubmissions(); err != nil {
			return nil, err
		}
	case SourceForm:
		if err := f.AcceptsPublicSubmissions(); err != nil {
			return nil, err
		}
	default:
		return nil, domain.Validation("metadata.source", "invalid_value", "source must be api or form")
	}
	if meta.Source == SourceForm && hasPendingFiles(input) {
		return nil, domain.Validation("metadata.source", "invalid_value", "a public post with files is built with Prepare")
	}
	input, named := byFieldID(f.Fields(), input)
	data, err := validate(f.Fields(), input, meta.Source == SourceForm, named)
	if err != nil {
		return nil, err
	}
	now = now.UTC()
	meta.Score = Score(f.Fields(), data)
	return &Submission{id: id, workspaceID: f.WorkspaceID(), formID: f.ID(), formVersion: f.Version(), data: data, metadata: meta, submittedAt: now, updatedAt: now,
		emails: EmailAnswers(f.Fields(), data), emailsKnown: true}, nil
}

// UnmarshalFromDatabase rebuilds a stored submission without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, formID string, data map[string]Value, meta Metadata, submittedAt, updatedAt time.Time) *Submission {
	return &Submission{id: id, workspaceID: workspaceID, formID: formID, formVersion: 1, data: data, metadata: meta,
		submittedAt: submittedAt.UTC(), updatedAt: updatedAt.UTC()}
}

// Update merges changes into the answers (nil clears an optional answer) and re-validates
// the result against the form's current fields. Changes name each field by its ID or its key.
// Stored answers to fields the form no longer has are kept unchanged. Nothing changes when
// validation fails.
func (s *Submission) Update(f *form.Form, changes map[string]Input, now time.Time) error {
	if err := f.AcceptsAPISubmissions(); err != nil {
		return err
	}
	fields := f.Fields()
	changes, named := byFieldID(fields, changes)
	current := make(map[string]bool, len(fields))
	merged := make(map[string]Input, len(fields))
	for _, fl := range fields {
		current[fl.ID] = true
		if v, ok := s.data[fl.ID]; ok {
			if fl.Type == form.TypeFile {
				// What is stored was checked when it came in: uploads stay uploads.
				ups := make([]Upload, 0, len(v.Strings()))
				for _, ref := range v.Strings() {
					ups = append(ups, Upload{Ref: ref})
				}
				merged[fl.ID] = ups
				continue
			}
			if v.IsList() {
				merged[fl.ID] = v.Strings()
			} else {
				merged[fl.ID] = v.String()
			}
		}
	}
	for k, v := range changes {
		merged[k] = v
	}
	data, err := validate(fields, merged, false, named)
	if err != nil {
		return err
	}
	for k, v := range s.data {
		if !current[k] {
			data[k] = v
		}
	}
	s.data = data
	if form.HasScores(fields) || s.metadata.Score != nil {
		s.metadata.Score = Score(fields, data)
	}
	s.emails, s.emailsKnown = EmailAnswers(fields, data), true
	s.updatedAt = now.UTC()
	return nil
}

// ID returns the submission ID.
func (s *Submission) ID() string { return s.id }

// WorkspaceID returns the owning workspace.
func (s *Submission) WorkspaceID() string { return s.workspaceID }

// FormID returns the form answered.
func (s *Submission) FormID() string { return s.formID }

// FormVersion returns the version of the form the submission answered (read-only: set at
// capture from the form).
func (s *Submission) FormVersion() int { return s.formVersion }

// WithFormVersionFromDatabase gives a stored submission its stored form version (after
// UnmarshalFromDatabase); a version below 1 is read as 1.
func (s *Submission) WithFormVersionFromDatabase(version int) *Submission {
	s.formVersion = max(version, 1)
	return s
}

// Data returns a copy of the answers keyed by field ID.
func (s *Submission) Data() map[string]Value {
	out := make(map[string]Value, len(s.data))
	for k, v := range s.data {
		out[k] = v
	}
	return out
}

// Answer returns the answer to one field, without copying the answers (Data does): exports
// read every field of every submission.
func (s *Submission) Answer(fieldID string) (Value, bool) {
	v, ok := s.data[fieldID]
	return v, ok
}

// EachAnswer calls fn with every answer, in no particular order, without copying the
// answers (the capture's counters read them once per submission).
func (s *Submission) EachAnswer(fn func(fieldID string, v Value)) {
	for k, v := range s.data {
		fn(k, v)
	}
}

// Metadata returns how the submission arrived.
func (s *Submission) Metadata() Metadata { return s.metadata }

// SubmittedAt returns the UTC time of receipt.
func (s *Submission) SubmittedAt() time.Time { return s.submittedAt }

// UpdatedAt returns the time of the last change.
func (s *Submission) UpdatedAt() time.Time { return s.updatedAt }

func sortedKeys(m map[string]Input) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// maxSubject bounds a form-backend post's _subject.
const maxSubject = 200

// CheckReply validates what a form-backend post adds for the owner's notification: replyTo
// (its _replyto) one email address, subject (its _subject) at most 200 characters of text.
// Violations name the posted fields, "_replyto" and "_subject".
func CheckReply(replyTo, subject *string) error {
	var vs domain.Violations
	if replyTo != nil && !validEmail(*replyTo) {
		vs.Add("_replyto", "invalid_value", "_replyto must be one email address such as name@example.com")
	}
	if subject != nil {
		if text.Field(&vs, "_subject", *subject) && utf8.RuneCountInString(*subject) > maxSubject {
			vs.Add("_subject", "too_long", fmt.Sprintf("_subject must be at most %d characters", maxSubject))
		}
	}
	return vs.Err()
}
