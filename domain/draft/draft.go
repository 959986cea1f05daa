// Package draft is a respondent's saved progress on a form that keeps drafts
// (settings.partial): the answers typed so far and the page reached, brought back by a resume
// link until the draft is submitted or expires. A draft is not a submission: it is never an
// event, a count or a row of an export.
package draft

import (
	"errors"
	"slices"
	"time"
)

// MaxResumeEmails bounds how many times one draft's resume link is emailed.
const MaxResumeEmails = 3

// Why a resume link does not bring its draft back.
var (
	// ErrUnknown: the link names no draft, or its secret is not the draft's (forged).
	ErrUnknown = errors.New("resume link not valid")
	// ErrExpired: the draft outlived its form's ttl_days after its last save.
	ErrExpired = errors.New("resume link expired")
	// ErrUsed: the draft was submitted; its answers are gone.
	ErrUsed = errors.New("resume link already used")
	// ErrOtherForm: the link belongs to another form's draft.
	ErrOtherForm = errors.New("resume link of another form")
	// ErrTooManyEmails: the link was emailed MaxResumeEmails times already.
	ErrTooManyEmails = errors.New("resume link emailed too often")
)

// Draft is one respondent's progress. Answers are kept as typed (field ID to values), so the
// page draws them again exactly; they are checked only when the response is submitted.
type Draft struct {
	id          string
	workspaceID string
	formID      string
	secretHash  []byte
	answers     map[string][]string
	page        int
	language    string
	// answerEmails are the normalised addresses the answers hold, resumeEmail the one the
	// respondent had the link sent to: privacy requests find the draft by either.
	answerEmails []string
	resumeEmail  string
	emailed      int
	createdAt    time.Time
	updatedAt    time.Time
	expiresAt    time.Time
	submittedAt  *time.Time
}

// New starts a draft; secretHash is the hash of its resume link's secret.
func New(id, workspaceID, formID string, secretHash []byte, now time.Time) *Draft {
	return &Draft{id: id, workspaceID: workspaceID, formID: formID, secretHash: secretHash,
		answers: map[string][]string{}, createdAt: now, updatedAt: now}
}

// Stored is a draft as storage keeps it.
type Stored struct {
	ID, WorkspaceID, FormID string
	SecretHash              []byte
	Answers                 map[string][]string
	Page                    int
	Language                string
	AnswerEmails            []string
	ResumeEmail             string
	Emailed                 int
	CreatedAt, UpdatedAt    time.Time
	ExpiresAt               time.Time
	SubmittedAt             *time.Time
}

// Unmarshal rebuilds a stored draft.
func Unmarshal(s Stored) *Draft {
	if s.Answers == nil {
		s.Answers = map[string][]string{}
	}
	return &Draft{id: s.ID, workspaceID: s.WorkspaceID, formID: s.FormID, secretHash: s.SecretHash, answers: s.Answers,
		page: s.Page, language: s.Language, answerEmails: s.AnswerEmails, resumeEmail: s.ResumeEmail, emailed: s.Emailed,
		createdAt: s.CreatedAt, updatedAt: s.UpdatedAt, expiresAt: s.ExpiresAt, submittedAt: s.SubmittedAt}
}

// Save keeps the answers and the page reached (and the page's language); the draft then lives
// ttl from now. emails are the normalised addresses the answers hold.
func (d *Draft) Save(answers map[string][]string, page int, language string, emails []string, now time.Time, ttl time.Duration) error {
	if d.submittedAt != nil {
		return ErrUsed
	}
	if answers == nil {
		answers = map[string][]string{}
	}
	d.answers, d.page, d.language, d.answerEmails = answers, page, language, emails
	d.updatedAt, d.expiresAt = now, now.Add(ttl)
	return nil
}

// Resumable reports why the draft cannot be resumed on formID at now, if it cannot.
func (d *Draft) Resumable(formID string, now time.Time) error {
	switch {
	case d.formID != formID:
		return ErrOtherForm
	case d.submittedAt != nil:
		return ErrUsed
	case !now.Before(d.expiresAt):
		return ErrExpired
	}
	return nil
}

// EmailTo records that the resume link goes to email (normalised).
func (d *Draft) EmailTo(email string, now time.Time) error {
	if err := d.Resumable(d.formID, now); err != nil {
		return err
	}
	if d.emailed >= MaxResumeEmails {
		return ErrTooManyEmails
	}
	d.resumeEmail = email
	d.emailed++
	return nil
}

// Submit ends the draft: its answers are forgotten, and its link answers "already used".
func (d *Draft) Submit(now time.Time) {
	d.answers, d.answerEmails, d.resumeEmail = map[string][]string{}, nil, ""
	d.submittedAt = &now
	d.updatedAt = now
}

func (d *Draft) ID() string                   { return d.id }
func (d *Draft) WorkspaceID() string          { return d.workspaceID }
func (d *Draft) FormID() string               { return d.formID }
func (d *Draft) SecretHash() []byte           { return d.secretHash }
func (d *Draft) Answers() map[string][]string { return d.answers }
func (d *Draft) Page() int                    { return d.page }
func (d *Draft) Language() string             { return d.language }
func (d *Draft) AnswerEmails() []string       { return d.answerEmails }
func (d *Draft) ResumeEmail() string          { return d.resumeEmail }
func (d *Draft) Emailed() int                 { return d.emailed }
func (d *Draft) CreatedAt() time.Time         { return d.createdAt }
func (d *Draft) UpdatedAt() time.Time         { return d.updatedAt }
func (d *Draft) ExpiresAt() time.Time         { return d.expiresAt }
func (d *Draft) SubmittedAt() *time.Time      { return d.submittedAt }

// Emails are every address privacy requests find the draft by.
func (d *Draft) Emails() []string {
	out := append([]string(nil), d.answerEmails...)
	if d.resumeEmail != "" && !slices.Contains(out, d.resumeEmail) {
		out = append(out, d.resumeEmail)
	}
	return out
}
