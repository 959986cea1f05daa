package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"go.uber.org/zap"
)

// MemoryUploadBytes is how much of one upload is kept in memory while a post is read; the
// rest is spooled to a file in Options.TempDir.
const MemoryUploadBytes = 1 << 20

// maxValueBytes bounds the text parts of a multipart post together (as a urlencoded post).
const maxValueBytes = MaxFormBytes

// errTooManyFiles stops reading a post at the first file over the limit.
var errTooManyFiles = errors.New("too many files in one post")

// errUnreadable is a post whose body could not be read; the cause is logged, never shown.
var errUnreadable = errors.New("the body could not be read")

// spooled is one uploaded file as read from the post: in memory, or in a temp file.
type spooled struct {
	field, name, contentType, sniffed string
	size                              int64
	mem                               []byte
	path                              string
}

func (s *spooled) open() (io.ReadCloser, error) {
	if s.path == "" {
		return io.NopCloser(bytes.NewReader(s.mem)), nil
	}
	return os.Open(s.path)
}

// multipartPost is a multipart body read part by part: the values, and the files in order.
type multipartPost struct {
	values url.Values
	files  []*spooled
}

// cleanup deletes the temp files of the post.
func (m *multipartPost) cleanup() {
	for _, f := range m.files {
		if f.path != "" {
			_ = os.Remove(f.path)
		}
	}
}

// readMultipart reads a multipart post itself (rather than ParseMultipartForm) so that it
// stops at the first file over maxFiles, spools large files under tempDir, and logs why a
// body could not be read. An empty file input (a part without a file name) is no file.
func readMultipart(r *http.Request, maxFiles int, tempDir string, log *zap.Logger) (*multipartPost, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	post := &multipartPost{values: url.Values{}}
	valueBytes := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return post, nil
		}
		if err != nil {
			return post, readFailed(err)
		}
		name := part.FormName()
		if name == "" {
			_ = part.Close()
			continue
		}
		if part.FileName() == "" {
			b, err := io.ReadAll(io.LimitReader(part, int64(maxValueBytes-valueBytes)+1))
			_ = part.Close()
			if err != nil {
				return post, readFailed(err)
			}
			valueBytes += len(b)
			if valueBytes > maxValueBytes {
				return post, &http.MaxBytesError{Limit: maxValueBytes}
			}
			post.values.Add(name, string(b))
			continue
		}
		if len(post.files) >= maxFiles {
			_ = part.Close()
			return post, errTooManyFiles
		}
		f := &spooled{field: name, name: part.FileName(), contentType: part.Header.Get("Content-Type")}
		err = spool(part, f, tempDir, log)
		_ = part.Close()
		post.files = append(post.files, f)
		if err != nil {
			return post, err
		}
	}
}

// spool reads one file: the first MemoryUploadBytes in memory, the rest into a temp file.
func spool(part io.Reader, f *spooled, tempDir string, log *zap.Logger) error {
	head := make([]byte, MemoryUploadBytes+1)
	n, err := io.ReadFull(part, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return readFailed(err)
	}
	f.size = int64(n)
	f.sniffed = http.DetectContentType(head[:min(n, 512)])
	if n <= MemoryUploadBytes {
		f.mem = head[:n]
		return nil
	}
	tmp, err := os.CreateTemp(tempDir, "formward-upload-*")
	if err != nil {
		// A read-only temp dir must say so in the log, not only "could not be read".
		log.Error("spool upload: cannot create a temp file; set FORMWARD_TEMP_DIR to a writable directory",
			zap.String("temp_dir", tempDir), zap.Error(err))
		return fmt.Errorf("%w: spool upload: %w", errUnreadable, err)
	}
	f.path = tmp.Name()
	written, err := io.Copy(tmp, io.MultiReader(bytes.NewReader(head[:n]), part))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	f.size = written
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		log.Error("spool upload", zap.String("temp_dir", tempDir), zap.Error(err))
		return fmt.Errorf("%w: spool upload: %w", errUnreadable, err)
	}
	return nil
}

// readFailed keeps a body-size error as it is (413) and marks any other as unreadable.
func readFailed(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return err
	}
	return fmt.Errorf("%w: %w", errUnreadable, err)
}
