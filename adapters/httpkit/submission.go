package httpkit

import (
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/submission"
)

// MetadataJSON is how a submission's metadata is shown.
type MetadataJSON struct {
	IP        *string           `json:"ip"`
	UserAgent *string           `json:"user_agent"`
	Referrer  *string           `json:"referrer"`
	Source    string            `json:"source"`
	UTM       map[string]string `json:"utm"`
	ReplyTo   *string           `json:"reply_to,omitempty"`
	Subject   *string           `json:"subject,omitempty"`
	// Language is the public page's language on a form with languages; absent otherwise.
	Language *string `json:"language,omitempty"`
	// Score is the submission's score; absent for forms without scores.
	Score *float64 `json:"score,omitempty"`
}

// SubmissionJSON is how a submission is shown: in the API's answers and in an NDJSON export.
type SubmissionJSON struct {
	ID          string         `json:"id"`
	FormID      string         `json:"form_id"`
	FormVersion int            `json:"form_version"`
	Data        map[string]any `json:"data"`
	Metadata    MetadataJSON   `json:"metadata"`
	SubmittedAt string         `json:"submitted_at"`
	UpdatedAt   string         `json:"updated_at"`
}

// FileLinker turns one stored answer of s into a signed, expiring download link when it names
// a file uploaded with s itself; any other value comes back unchanged.
type FileLinker func(s *submission.Submission, value string) string

// KeepValue is the FileLinker that links nothing: every value is shown as stored.
func KeepValue(_ *submission.Submission, v string) string { return v }

// PresentSubmission shows a submission; fileURL turns its own uploads into signed, expiring
// download links (other values, external links included, pass through unchanged).
func PresentSubmission(s *submission.Submission, fileURL FileLinker) SubmissionJSON {
	data := make(map[string]any, len(s.Data()))
	for k, v := range s.Data() {
		if v.IsList() {
			items := v.Strings()
			for i, it := range items {
				items[i] = fileURL(s, it)
			}
			data[k] = items
		} else {
			data[k] = v.String()
		}
	}
	m := s.Metadata()
	utm := m.UTM
	if utm == nil {
		utm = map[string]string{}
	}
	return SubmissionJSON{
		ID: s.ID(), FormID: s.FormID(), FormVersion: s.FormVersion(), Data: data,
		Metadata:    MetadataJSON{IP: m.IPHash, UserAgent: m.UserAgent, Referrer: m.Referrer, Source: string(m.Source), UTM: utm, ReplyTo: m.ReplyTo, Subject: m.Subject, Language: m.Language, Score: m.Score},
		SubmittedAt: domain.FormatTime(s.SubmittedAt()), UpdatedAt: domain.FormatTime(s.UpdatedAt()),
	}
}
