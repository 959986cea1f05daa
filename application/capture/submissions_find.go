package capture

import (
	"context"
	"slices"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// MaxScannedPerPage bounds the submissions one page of a filtered list opens. Answers are
// sealed at rest, so a value filter can only compare them once decrypted: a page reads
// submissions in keyset order until it has its rows or has opened this many, and then says
// where to resume. The work per page stays bounded whatever the size of the form.
const MaxScannedPerPage = 2000

// findBatch is how many submissions a filtered Find reads at a time. An unfiltered page reads
// exactly its rows and one more (to know whether a next page exists): every submission read is
// decrypted, and reading a filtered page's batch for a 25-row page opened eight times the rows
// shown.
const findBatch = 200

// ValueMatch keeps the submissions whose answer to FieldID contains Contains (case
// insensitive; any item of a list answer).
type ValueMatch struct {
	FieldID  string
	Contains string
}

// SubmissionPage is one page of a list that may have stopped before it was full.
type SubmissionPage struct {
	// Submissions are newest first.
	Submissions []*submission.Submission
	// More says whether there may be more in the paging direction: older ones for a page
	// after a position, newer ones for a page before one.
	More bool
	// Resume is where the next page in that direction starts: the last submission read,
	// shown or not (nil when More is false).
	Resume *ports.Position
	// Scanned is how many submissions the page opened.
	Scanned int
}

// Find reads one page like Handle, and also filters by value and by source and pages towards newer
// submissions (Before). A filtered page stops after MaxScannedPerPage submissions even when it
// is not full; Resume then says where the search goes on.
func (h ListSubmissionsHandler) Find(ctx context.Context, q ListSubmissions) (SubmissionPage, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return SubmissionPage{}, err
	}
	match := func(*submission.Submission) bool { return true }
	limit := q.Page.Limit
	if limit < 1 {
		limit = 1
	}
	batch := limit + 1
	if q.Match != nil && strings.TrimSpace(q.Match.Contains) != "" {
		batch = max(findBatch, batch)
		if _, ok := f.Field(q.Match.FieldID); !ok {
			return SubmissionPage{}, domain.Validation("field", "unknown_field", "the form has no such field")
		}
		id, want := q.Match.FieldID, strings.ToLower(strings.TrimSpace(q.Match.Contains))
		match = func(s *submission.Submission) bool {
			v, ok := s.Answer(id)
			if !ok {
				return false
			}
			for _, item := range v.Strings() {
				if strings.Contains(strings.ToLower(item), want) {
					return true
				}
			}
			return false
		}
	}
	if q.Source != "" {
		if q.Source != submission.SourceForm && q.Source != submission.SourceAPI {
			return SubmissionPage{}, domain.Validation("source", "invalid_value", "the source is form or api")
		}
		batch = max(findBatch, batch)
		byValue, want := match, q.Source
		match = func(s *submission.Submission) bool { return s.Metadata().Source == want && byValue(s) }
	}
	read := func(after *ports.Position, n int) ([]*submission.Submission, error) {
		return h.submissions.List(ctx, p.WorkspaceID, q.FormID, ports.SubmissionQuery{
			Page: ports.Page{Limit: n, After: after}, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore})
	}
	from := q.Page.After
	if q.Before != nil {
		if h.scanner == nil {
			return SubmissionPage{}, domain.ErrNotFound
		}
		from = q.Before
		read = func(after *ports.Position, n int) ([]*submission.Submission, error) {
			return h.scanner.ListOldestFirst(ctx, p.WorkspaceID, q.FormID, ports.OldestFirst{
				Limit: n, After: after, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore})
		}
	}
	page, err := scanPage(read, from, limit, batch, h.scanLimit, match)
	if err != nil {
		return SubmissionPage{}, err
	}
	if q.Before != nil {
		slices.Reverse(page.Submissions)
	}
	return page, nil
}

// scanPage reads in keyset order from from, batch rows at a time, until it holds limit matches
// (and knows whether another follows), the rows run out, or scanLimit rows were opened.
func scanPage(read func(after *ports.Position, n int) ([]*submission.Submission, error), from *ports.Position, limit, batch, scanLimit int,
	match func(*submission.Submission) bool) (SubmissionPage, error) {
	var out SubmissionPage
	pos := from
	for {
		n := batch
		if left := scanLimit - out.Scanned; left < n {
			n = max(left, limit+1-len(out.Submissions))
		}
		batch, err := read(pos, n)
		if err != nil {
			return SubmissionPage{}, err
		}
		for _, s := range batch {
			out.Scanned++
			if match(s) {
				if len(out.Submissions) == limit {
					// One more match exists: the page is full and the next starts after its last row.
					last := out.Submissions[limit-1]
					out.More, out.Resume = true, &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
					return out, nil
				}
				out.Submissions = append(out.Submissions, s)
			}
			pos = &ports.Position{CreatedAt: s.SubmittedAt(), ID: s.ID()}
		}
		if len(batch) < n {
			return out, nil
		}
		if out.Scanned >= scanLimit {
			out.More, out.Resume = true, pos
			return out, nil
		}
	}
}
