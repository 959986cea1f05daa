package capture

import (
	"context"
	"path"
	"strings"
	"sync"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// FileLinkPath is how a link that never expires names one of a submission's uploaded files:
// what follows "/app/files/<submission id>/". For a file stored under the submission's own
// prefix it is the rest of the key ("obj_…/cv.pdf"); for an upload stored before that prefix
// existed (a reference to a key under the form's prefix) the rest after the form's prefix
// ("<128-bit hex>/cv.pdf"). ok is false for any other value: an external link, a text.
// Whether the value really is the submission's file is for the signer to decide when the link
// is opened.
func FileLinkPath(s *submission.Submission, value string) (string, bool) {
	if rest, ok := strings.CutPrefix(value, ports.SubmissionFilesPrefix(s.WorkspaceID(), s.FormID(), s.ID())); ok {
		return rest, linkable(rest)
	}
	if !strings.Contains(value, "/files/") {
		return "", false
	}
	key, ok := FileKey(value, ports.FormFilesPrefix(s.WorkspaceID(), s.FormID()))
	if !ok {
		return "", false
	}
	rest := strings.TrimPrefix(key, ports.FormFilesPrefix(s.WorkspaceID(), s.FormID()))
	return rest, linkable(rest)
}

// linkable accepts "<directory>/<name>" of key characters only, so the path goes into a URL
// as it is.
func linkable(rest string) bool {
	dir, name, ok := strings.Cut(rest, "/")
	if !ok || dir == "" || name == "" || strings.Contains(name, "/") || dir == ".." || name == ".." || dir == "." || name == "." {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// fileObjectKey is the object store key of a stored file answer (FileLinkPath said yes).
func fileObjectKey(s *submission.Submission, value string) (string, bool) {
	if strings.HasPrefix(value, ports.SubmissionFilesPrefix(s.WorkspaceID(), s.FormID(), s.ID())) {
		return value, true
	}
	return FileKey(value, ports.FormFilesPrefix(s.WorkspaceID(), s.FormID()))
}

// GetSubmissionFile finds the stored answer that names one uploaded file of a submission of
// the principal's workspace: the target of a file link that never expires.
type GetSubmissionFile struct {
	SubmissionID string
	// File is the link's FileLinkPath.
	File string
}

// SubmissionFile is a submission and its stored answer that names the file asked for; the
// adapter signs a download link of that answer.
type SubmissionFile struct {
	Submission *submission.Submission
	Value      string
}

// GetSubmissionFileHandler reads file answers.
type GetSubmissionFileHandler struct{ submissions ports.SubmissionRepository }

// NewGetSubmissionFileHandler makes the query.
func NewGetSubmissionFileHandler(submissions ports.SubmissionRepository) GetSubmissionFileHandler {
	return GetSubmissionFileHandler{submissions: submissions}
}

// Handle returns the answer naming the file, or domain.ErrNotFound when the submission is not
// in the principal's workspace or holds no such file. Every role may read files.
func (h GetSubmissionFileHandler) Handle(ctx context.Context, q GetSubmissionFile) (SubmissionFile, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return SubmissionFile{}, err
	}
	if q.SubmissionID == "" || q.File == "" {
		return SubmissionFile{}, domain.ErrNotFound
	}
	s, err := h.submissions.Find(ctx, p.WorkspaceID, q.SubmissionID)
	if err != nil {
		return SubmissionFile{}, err
	}
	for _, v := range s.Data() {
		for _, item := range v.Strings() {
			if got, ok := FileLinkPath(s, item); ok && got == q.File {
				return SubmissionFile{Submission: s, Value: item}, nil
			}
		}
	}
	return SubmissionFile{}, domain.ErrNotFound
}

// StoredFile is an uploaded file as a link shows it: "cv.pdf, 120 KB".
type StoredFile struct {
	// Path is the file's FileLinkPath, Name its (sanitised) file name.
	Path, Name string
	// Size is its length in bytes, or -1 when the file store could not say.
	Size int64
}

// DescribeFiles asks for the names and sizes of the files that the given answers of the
// submissions name (the file fields of a page of responses).
type DescribeFiles struct {
	Submissions []*submission.Submission
	// FieldIDs are the answers to look at.
	FieldIDs []string
}

// describeWorkers bounds the file store lookups of one page that run at once.
const describeWorkers = 8

// maxKnownSizes bounds the file sizes a DescribeFilesHandler remembers.
const maxKnownSizes = 20_000

// DescribeFilesHandler reads file names from the stored answers and sizes from the file
// store, once per file: an object key never names other bytes later (every upload gets a new
// key), so a size read once is remembered.
type DescribeFilesHandler struct {
	files ports.ObjectStore
	known *knownSizes
}

type knownSizes struct {
	mu    sync.Mutex
	sizes map[string]int64
}

func (k *knownSizes) get(key string) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, ok := k.sizes[key]
	return n, ok
}

func (k *knownSizes) put(key string, n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.sizes) >= maxKnownSizes {
		clear(k.sizes)
	}
	k.sizes[key] = n
}

// NewDescribeFilesHandler makes the query; files may be nil (no sizes are shown).
func NewDescribeFilesHandler(files ports.ObjectStore) DescribeFilesHandler {
	return DescribeFilesHandler{files: files, known: &knownSizes{sizes: map[string]int64{}}}
}

// Handle returns, by submission ID and then by stored value, the files the answers name. A
// submission of another workspace than the principal's is left out.
func (h DescribeFilesHandler) Handle(ctx context.Context, q DescribeFiles) (map[string]map[string]StoredFile, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]StoredFile{}
	type lookup struct{ sub, value, key string }
	var missing []lookup
	for _, s := range q.Submissions {
		if s.WorkspaceID() != p.WorkspaceID {
			continue
		}
		for _, id := range q.FieldIDs {
			v, ok := s.Answer(id)
			if !ok {
				continue
			}
			for _, item := range v.Strings() {
				rest, ok := FileLinkPath(s, item)
				if !ok {
					continue
				}
				key, _ := fileObjectKey(s, item)
				f := StoredFile{Path: rest, Name: path.Base(rest), Size: -1}
				if n, ok := h.known.get(key); ok {
					f.Size = n
				} else if h.files != nil {
					missing = append(missing, lookup{sub: s.ID(), value: item, key: key})
				}
				if out[s.ID()] == nil {
					out[s.ID()] = map[string]StoredFile{}
				}
				out[s.ID()][item] = f
			}
		}
	}
	sizes := make([]int64, len(missing))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(describeWorkers, len(missing)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				sizes[i] = h.size(ctx, missing[i].key)
			}
		}()
	}
	for i := range missing {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, m := range missing {
		f := out[m.sub][m.value]
		f.Size = sizes[i]
		out[m.sub][m.value] = f
	}
	return out, nil
}

// size asks the file store for the length of one object; -1 when it cannot say (a missing
// file, the store unavailable: the link still shows, without its size).
func (h DescribeFilesHandler) size(ctx context.Context, key string) int64 {
	rc, info, err := h.files.Get(ctx, key)
	if err != nil {
		return -1
	}
	_ = rc.Close()
	h.known.put(key, info.Size)
	return info.Size
}
