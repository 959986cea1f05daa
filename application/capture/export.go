package capture

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// ExportBatch is how many submissions an export reads (and decrypts) at a time: memory holds
// one batch, whatever the number of submissions.
const ExportBatch = 1000

// ExportSubmissions asks for every submission of a form, oldest first, optionally within
// exclusive time bounds. Format names the file format; it is recorded in the audit log.
type ExportSubmissions struct {
	FormID        string
	Format        string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// SignedFileLinks says the file links uploads with signed links, which anyone holding one
	// may open for an hour (not the links that need a member's sign-in); the audit log records it.
	SignedFileLinks bool
	// IncludeRemoved adds, after the fields, a column per field removed from the form with
	// the answers stored for it (tabular formats; NDJSON lines always carry every stored answer).
	IncludeRemoved bool
	// IDs, when not empty, exports only the submissions with these IDs (at most
	// MaxExportIDs; the responses chosen in a table).
	IDs []string
}

// MaxExportIDs bounds the submissions an export of chosen IDs names.
const MaxExportIDs = 500

// ExportSubmissionsHandler starts exports: it checks the principal may read, records
// submissions.exported, and hands back an Export that reads the submissions in batches.
type ExportSubmissionsHandler struct {
	forms   ports.FormRepository
	scanner ports.SubmissionScanner
	audit   ports.AuditLog
	ids     ports.IDs
	clock   ports.Clock
	batch   int
}

// NewExportSubmissionsHandler makes the query.
func NewExportSubmissionsHandler(forms ports.FormRepository, scanner ports.SubmissionScanner, audit ports.AuditLog, ids ports.IDs,
	clock ports.Clock) ExportSubmissionsHandler {
	return ExportSubmissionsHandler{forms: forms, scanner: scanner, audit: audit, ids: ids, clock: clock, batch: ExportBatch}
}

// WithBatch returns the handler reading n submissions at a time (tests cross batch edges).
func (h ExportSubmissionsHandler) WithBatch(n int) ExportSubmissionsHandler {
	if n > 0 {
		h.batch = n
	}
	return h
}

// Handle returns the export of the form, once the audit event naming who exported it (and the
// format and bounds asked for) is stored. An unknown form, or one of another workspace, is
// domain.ErrNotFound.
func (h ExportSubmissionsHandler) Handle(ctx context.Context, q ExportSubmissions) (*Export, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, err
	}
	ids, err := exportIDs(q.IDs)
	if err != nil {
		return nil, err
	}
	details := map[string]any{"form_id": f.ID(), "format": q.Format}
	if len(ids) > 0 {
		details["ids"] = len(ids)
	}
	if q.CreatedAfter != nil {
		details["created_after"] = domain.FormatTime(*q.CreatedAfter)
	}
	if q.CreatedBefore != nil {
		details["created_before"] = domain.FormatTime(*q.CreatedBefore)
	}
	var removed []form.RemovedField
	if q.IncludeRemoved {
		details["include_removed"] = true
		removed = f.RemovedFields()
	}
	if q.SignedFileLinks {
		details["file_links"] = "signed"
	}
	now := h.clock.Now()
	e, err := p.AuditEvent(h.ids, now, audit.SubmissionsExported, &audit.Target{Type: "form", ID: f.ID()}, details)
	if err != nil {
		return nil, err
	}
	if err := h.audit.Append(ctx, e); err != nil {
		return nil, err
	}
	fields := f.Fields()
	removedFields := make([]form.Field, len(removed))
	for i, r := range removed {
		removedFields[i] = r.AsField()
	}
	out := &Export{Form: f, At: now, Columns: exportColumns(fields, removed), Kinds: exportKinds(fields, removed), scanner: h.scanner, batch: h.batch,
		workspaceID: p.WorkspaceID, createdAfter: q.CreatedAfter, createdBefore: q.CreatedBefore, ids: ids, fields: fields, removed: removedFields,
		scored: form.HasScores(fields)}
	out.withLanguageColumn()
	return out, nil
}

// exportIDs are the chosen IDs, trimmed and named once; more than MaxExportIDs, or an empty
// one among them, is a validation error.
func exportIDs(raw []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, id := range raw {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, domain.Validation("ids", "invalid_value", "a response ID is empty")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > MaxExportIDs {
		return nil, domain.Validation("ids", "too_many", "export at most "+strconv.Itoa(MaxExportIDs)+" chosen responses at once")
	}
	return out, nil
}

// Export is one export under way: the form, when it started, its columns, and the
// submissions, read in batches as Each asks for them.
type Export struct {
	Form *form.Form
	// At is when the export started (the date of its file name).
	At time.Time
	// Columns are the titles of the tabular formats' header row.
	Columns []string
	// Kinds say what each column holds, in the order of Columns, for formats whose cells have
	// types (XLSX).
	Kinds []ColumnKind

	scanner       ports.SubmissionScanner
	batch         int
	workspaceID   string
	createdAfter  *time.Time
	createdBefore *time.Time
	ids           []string
	// fields are Form.Fields(), copied once: Row reads them for every submission.
	fields []form.Field
	// removed are the removed fields whose columns follow the fields (IncludeRemoved).
	removed []form.Field
	// language: the form has languages, and the last column is each response's (languages.go).
	language bool
	// scored: the form has scores, and the score column follows the metadata (scores_export.go).
	scored bool
}

// Each calls fn with every submission, oldest first; it stops at the first error (of reading,
// or of fn). The next batches are read while fn works through the current one, so at most
// three batches are in memory (the current one, one read ahead, one being read).
func (e *Export) Each(ctx context.Context, fn func(*submission.Submission) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type batch struct {
		subs []*submission.Submission
		err  error
	}
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		q := ports.OldestFirst{Limit: e.batch, CreatedAfter: e.createdAfter, CreatedBefore: e.createdBefore, IDs: e.ids}
		for {
			subs, err := e.scanner.ListOldestFirst(ctx, e.workspaceID, e.Form.ID(), q)
			select {
			case batches <- batch{subs: subs, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(subs) < q.Limit {
				return
			}
			last := subs[len(subs)-1]
			q.After = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
		}
	}()
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		for _, s := range b.subs {
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// ColumnKind is what a tabular export's column holds. Row writes every cell as text; a format
// with typed cells reads the text back by its column's kind.
type ColumnKind int

// The column kinds.
const (
	// TextColumn cells are text.
	TextColumn ColumnKind = iota
	// NumberColumn cells are empty or a decimal number as the submission stores it ("42",
	// "-3.5", "1e-7").
	NumberColumn
	// DateColumn cells are empty or a calendar date, YYYY-MM-DD.
	DateColumn
	// TimeColumn cells are a UTC date-time, RFC 3339 with milliseconds (submitted_at).
	TimeColumn
)

// exportKinds are the kinds of exportColumns(fields, removed): submitted_at is a time, number
// and date fields (removed ones too) are numbers and dates, everything else is text.
func exportKinds(fields []form.Field, removed []form.RemovedField) []ColumnKind {
	kinds := make([]ColumnKind, 0, 2+len(fields)+len(removed)+len(metadataColumns))
	kinds = append(kinds, TextColumn, TimeColumn)
	kindOf := func(t form.FieldType) ColumnKind {
		switch t {
		case form.TypeNumber:
			return NumberColumn
		case form.TypeDate:
			return DateColumn
		}
		return TextColumn
	}
	for _, fl := range fields {
		kinds = append(kinds, kindOf(fl.Type))
	}
	for _, r := range removed {
		kinds = append(kinds, kindOf(r.Type))
	}
	for range metadataColumns {
		kinds = append(kinds, TextColumn)
	}
	if form.HasScores(fields) {
		kinds = append(kinds, NumberColumn)
	}
	return kinds
}

// metadataColumns follow the fields in a tabular export.
var metadataColumns = []string{"source", "referrer", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}

// RemovedSuffix ends the title of a removed field's column: "Phone (removed)".
const RemovedSuffix = " (removed)"

// ExportColumns are the header of a tabular export: submission_id, submitted_at, one column
// per field titled by its label in form order (a label seen before gets " (2)", " (3)", …),
// then source, referrer and the five UTM parameters.
func ExportColumns(f *form.Form) []string {
	return withLanguage(f, exportColumns(f.Fields(), nil))
}

// exportColumns are ExportColumns with, after the fields, one column per removed field titled
// "<label> (removed)" (numbered alike when seen before), in the order they were removed.
func exportColumns(fields []form.Field, removed []form.RemovedField) []string {
	cols := make([]string, 0, 2+len(fields)+len(removed)+len(metadataColumns))
	cols = append(cols, "submission_id", "submitted_at")
	seen := make(map[string]int, len(fields)+len(removed))
	title := func(label string) string {
		seen[label]++
		if n := seen[label]; n > 1 {
			return label + " (" + strconv.Itoa(n) + ")"
		}
		return label
	}
	for _, fl := range fields {
		cols = append(cols, title(fl.Label))
	}
	for _, r := range removed {
		cols = append(cols, title(r.Label+RemovedSuffix))
	}
	return appendScoreColumn(append(cols, metadataColumns...), fields)
}

// Row is one submission as a tabular export writes it, in the order of Columns: lists joined
// with ", ", each item of a list (a file field's uploads) passed through link first, missing
// answers empty.
func (e *Export) Row(s *submission.Submission, link func(s *submission.Submission, value string) string, row []string) []string {
	row = row[:0]
	row = append(row, s.ID(), domain.FormatTime(s.SubmittedAt()))
	fields := e.fields
	if fields == nil {
		fields = e.Form.Fields()
	}
	for _, fl := range fields {
		row = appendAnswer(row, s, fl, link)
	}
	for _, fl := range e.removed {
		row = appendAnswer(row, s, fl, link)
	}
	m := s.Metadata()
	referrer := ""
	if m.Referrer != nil {
		referrer = *m.Referrer
	}
	row = append(row, string(m.Source), referrer)
	for _, k := range submission.UTMKeys {
		row = append(row, m.UTM[k])
	}
	if e.scored || (e.fields == nil && e.Form.HasScores()) {
		row = append(row, scoreCell(m.Score))
	}
	if e.language {
		row = append(row, languageCell(m))
	}
	return row
}

// appendAnswer appends the cell of s's answer to fl.
func appendAnswer(row []string, s *submission.Submission, fl form.Field, link func(s *submission.Submission, value string) string) []string {
	v, ok := s.Answer(fl.ID)
	switch {
	case !ok:
		return append(row, "")
	case v.IsList() && fl.Type == form.TypeFile && link != nil:
		items := v.Strings()
		for i, it := range items {
			items[i] = link(s, it)
		}
		return append(row, joinItems(items))
	}
	return append(row, v.String())
}

func joinItems(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	n := 2 * (len(items) - 1)
	for _, it := range items {
		n += len(it)
	}
	b := make([]byte, 0, n)
	for i, it := range items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, it...)
	}
	return string(b)
}
