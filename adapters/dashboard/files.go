package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// mountFiles adds the file links that never expire: /app/files/<submission id>/<file>.
func (h *Handler) mountFiles(w *gin.RouterGroup) {
	w.GET(strings.TrimPrefix(httpkit.MemberFilesPath, "/app")+":sid/*file", h.file)
}

// file sends a signed-in member of the submission's workspace (any role) on to a freshly
// signed download link of the file, so that a link kept in an export or a bookmark works for
// as long as the file exists. A submission of another workspace, or a file it does not hold,
// is not found.
func (h *Handler) file(c *gin.Context) {
	sf, err := h.app.Queries.GetSubmissionFile.Handle(c.Request.Context(), capture.GetSubmissionFile{
		SubmissionID: c.Param("sid"), File: strings.TrimPrefix(c.Param("file"), "/")})
	if errors.Is(err, domain.ErrNotFound) {
		h.fileNotFound(c)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	link := sf.Value
	if h.fileURL != nil {
		link = h.fileURL(sf.Submission, sf.Value)
	}
	if link == sf.Value {
		// Not one of the submission's own uploads: nothing to sign.
		h.fileNotFound(c)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusSeeOther, link)
}

// fileNotFound says why a file link may lead nowhere, and what to try when the person has
// other workspaces (a link only opens in the workspace the person is in).
func (h *Handler) fileNotFound(c *gin.Context) {
	m := message{Heading: "File not found", Paragraphs: []string{
		"This file is not among the responses of this workspace: its response may have been deleted, or the link is incomplete."},
		Action: &link{Href: "/app", Label: "Back to the dashboard"}}
	if sp, _ := sessionOf(c); len(sp.Workspaces) > 1 {
		m.Paragraphs = append(m.Paragraphs, "If it belongs to another of your workspaces, switch to that workspace in the header, then open the link again.")
	}
	c.Header("Cache-Control", "no-store")
	h.render(c, http.StatusNotFound, "message", &view{Title: m.Heading, Data: m})
}

// fileLink is one item of a file answer: a named link ("cv.pdf", "120 KB") to the file, or a
// value that is not one of the submission's uploads, shown as it is (linked when it is a web
// address).
type fileLink struct {
	Href, Name, Size string
}

// pageFiles are the names and sizes of a page's uploaded files, by submission ID and value.
type pageFiles map[string]map[string]capture.StoredFile

// describeFiles reads the names and sizes of the files the file answers of subs name (fields
// of f, removed ones included). Without them the links still show, without sizes.
func (h *Handler) describeFiles(ctx context.Context, f *form.Form, subs []*submission.Submission) pageFiles {
	var ids []string
	for _, fl := range f.Fields() {
		if fl.Type == form.TypeFile {
			ids = append(ids, fl.ID)
		}
	}
	for _, r := range f.RemovedFields() {
		if fl := r.AsField(); fl.Type == form.TypeFile {
			ids = append(ids, fl.ID)
		}
	}
	if len(ids) == 0 || len(subs) == 0 {
		return nil
	}
	files, err := h.app.Queries.DescribeFiles.Handle(ctx, capture.DescribeFiles{Submissions: subs, FieldIDs: ids})
	if err != nil {
		h.log.Warn("describe files", zap.Error(err))
		return nil
	}
	return files
}

// fileLinks is a file answer as the dashboard shows it: the submission's own uploads as named
// links that never expire (/app/files/…), anything else as stored. nil for other fields.
func (h *Handler) fileLinks(s *submission.Submission, fl form.Field, files pageFiles) []fileLink {
	v, ok := s.Data()[fl.ID]
	if fl.Type != form.TypeFile || !ok {
		return nil
	}
	member := httpkit.MemberLinks("", h.fileURL)
	if h.fileURL == nil {
		member = httpkit.KeepValue
	}
	var out []fileLink
	for _, item := range v.Strings() {
		href := member(s, item)
		if href == item {
			l := fileLink{Name: item}
			if u, err := url.Parse(item); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
				l.Href = item
			}
			out = append(out, l)
			continue
		}
		l := fileLink{Href: href, Name: href[strings.LastIndexByte(href, '/')+1:]}
		if sf, ok := files[s.ID()][item]; ok {
			l.Name = sf.Name
			if sf.Size >= 0 {
				l.Size = fileSize(sf.Size)
			}
		}
		out = append(out, l)
	}
	return out
}

// fileSize is a file's length as people read it: "830 bytes", "120 KB", "4.2 MB".
func fileSize(n int64) string {
	const kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
	one := func(v float64, unit string) string {
		s := strconv.FormatFloat(v, 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + " " + unit
	}
	switch {
	case n == 1:
		return "1 byte"
	case n < kb:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < mb-kb/2:
		return strconv.FormatInt(max(1, (n+kb/2)/kb), 10) + " KB"
	case n < gb:
		return one(float64(n)/mb, "MB")
	}
	return one(float64(n)/gb, "GB")
}
