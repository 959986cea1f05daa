package web

import (
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Funcs(templateFuncs()).ParseFS(templateFS, "templates/*.html")
}

var previewTemplates = sync.OnceValues(parseTemplates)

// previewNote ends every page the preview draws after its final post.
const previewNote = "This is a preview: nothing was sent or stored."

// Preview writes the builder's preview of a form, whatever its status: the public page drawn
// by the same template and data as GET /f/{id}, with its buttons posting to action (the
// dashboard's preview route). post is nil for the first view; otherwise it is the post of one
// of the preview's buttons, read and checked as the public page reads and checks a
// respondent's post: Next checks the page and draws the next page the answers lead to (or the
// page again with its errors), Back draws the previous one, and the final post is checked whole
// (answers and files) and answered with the thank-you a respondent would see, saying nothing
// was sent. It returns the status to answer with.
//
// Nothing is stored or counted: Preview has no storage to write to, the page carries no render
// token (so its script reports no start), and uploaded files are read only to measure them.
// The spam rules (proof of work, captcha, the minimum fill time) do not apply to a preview.
func Preview(w io.Writer, f *form.Form, action string, post *http.Request) (int, error) {
	t, err := previewTemplates()
	if err != nil {
		return 0, err
	}
	page := func(status int, values map[string][]string, errs map[string]string, formError string, step int) (int, error) {
		d := formData(f, nil, values, errs, formError, step) // no captchas: the preview draws none
		d.Action = action
		if d.Steps != nil {
			d.Steps.Action = action
		}
		d.PoW, d.Challenge, d.Captcha, d.Wait = false, "", nil, 0
		d.Partial = false // the preview keeps no drafts
		return status, t.ExecuteTemplate(w, "form.html", d)
	}
	if post == nil {
		return page(http.StatusOK, nil, nil, "", 0)
	}
	pf, files, err := readPreviewPost(post, f)
	if err != nil {
		b := httperr.Problem(unreadable(err))
		if b.Status == http.StatusUnprocessableEntity { // too many files: the page again, with the error
			values, _ := answers(f, pf)
			errs, formError := fieldErrors(b)
			return page(b.Status, values, errs, formError, errorStep(f, errs, formError))
		}
		m, ok := errorPages[b.Code]
		if !ok {
			m = errorPages["invalid_request"]
		}
		m.Note, m.Again = previewNote, action
		return b.Status, t.ExecuteTemplate(w, "message.html", messagePage{m, themeOf(f.ID(), f.Settings().Theme)})
	}
	values, data := answers(f, pf)
	at, _ := strconv.Atoi(pf.Get("_page"))
	fields := f.Fields()
	switch pf.Get("_nav") {
	case "back", "next":
		if !form.Paged(fields) {
			break // a single page has no steps: the post is the final one
		}
		var skipped map[string]bool
		if form.HasLogic(fields) {
			skipped = submission.Skipped(f, data)
		}
		steps := form.Steps(fields, skipped)
		if pf.Get("_nav") == "back" {
			return page(http.StatusOK, values, nil, "", prevStep(steps, at))
		}
		if err := submission.CheckPage(f, data, at); err != nil {
			errs, formError := fieldErrors(httperr.Problem(err))
			return page(http.StatusUnprocessableEntity, values, errs, formError, at)
		}
		return page(http.StatusOK, values, nil, "", nextStep(steps, at))
	}
	for id, infos := range files {
		data[id] = infos
	}
	score, err := submission.CheckScored(f, data, submission.FileLimits{})
	if err != nil {
		b := httperr.Problem(err)
		if b.Status != http.StatusUnprocessableEntity {
			return 0, err
		}
		errs, formError := fieldErrors(b)
		if len(files) > 0 {
			formError += filesNotKept
		}
		return page(b.Status, values, errs, formError, errorStep(f, errs, formError))
	}
	s := f.Settings()
	m := messageData{Title: "Preview · Thank you", Heading: "Thank you!", Message: "Your response has been recorded.", Note: previewNote, Again: action}
	if s.ThankYouMessage != nil && *s.ThankYouMessage != "" {
		m.Message = thankYouScore(thankYouRecall(*s.ThankYouMessage, f, values), f, score)
	}
	if target, ok := redirectTarget(s); ok {
		m.Heading, m.Message = "Respondents go on to your page", "After sending, a respondent is taken to "+target+"."
	}
	return http.StatusOK, t.ExecuteTemplate(w, "message.html", messagePage{m, themeOf(f.ID(), s.Theme)})
}

// readPreviewPost reads a post of the preview as readPost reads a respondent's (urlencoded or
// multipart, within the same size limits), except that each uploaded file is only measured
// and sniffed, then dropped: files are the post's answers by field ID.
func readPreviewPost(r *http.Request, f *form.Form) (url.Values, map[string][]submission.FileInfo, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/x-www-form-urlencoded", "":
		r.Body = http.MaxBytesReader(nil, r.Body, MaxFormBytes)
		if err := r.ParseForm(); err != nil {
			return url.Values{}, nil, readFailed(err)
		}
		return r.PostForm, nil, nil
	case "multipart/form-data":
	default:
		return url.Values{}, nil, errBadBody
	}
	r.Body = http.MaxBytesReader(nil, r.Body, MaxMultipartBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return url.Values{}, nil, errBadBody
	}
	values := url.Values{}
	files := map[string][]submission.FileInfo{}
	valueBytes, count := 0, 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return values, files, nil
		}
		if err != nil {
			return values, nil, readFailed(err)
		}
		name := part.FormName()
		if part.FileName() == "" {
			b, err := io.ReadAll(io.LimitReader(part, int64(maxValueBytes-valueBytes)+1))
			_ = part.Close()
			if err != nil {
				return values, nil, readFailed(err)
			}
			if valueBytes += len(b); valueBytes > maxValueBytes {
				return values, nil, &http.MaxBytesError{Limit: maxValueBytes}
			}
			if name != "" {
				values.Add(name, string(b))
			}
			continue
		}
		if count++; count > submission.DefaultMaxFilesPerPost {
			_ = part.Close()
			return values, nil, domain.Validation("files", "too_many_files",
				"at most "+strconv.Itoa(submission.DefaultMaxFilesPerPost)+" files can be sent with one response")
		}
		head := make([]byte, 512)
		n, err := io.ReadFull(part, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			_ = part.Close()
			return values, nil, readFailed(err)
		}
		rest, err := io.Copy(io.Discard, part)
		_ = part.Close()
		if err != nil {
			return values, nil, readFailed(err)
		}
		id := name
		if fl, ok := fieldNamed(f, name); ok {
			id = fl.ID
		}
		files[id] = append(files[id], submission.FileInfo{Name: part.FileName(), Size: int64(n) + rest,
			Declared: part.Header.Get("Content-Type"), Sniffed: http.DetectContentType(head[:n])})
	}
}
