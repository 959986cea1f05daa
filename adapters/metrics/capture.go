package metrics

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// CaptureRoutes decorates the public handler with the capture series. Only the two capture
// routes are watched: POST /v1/forms/{id}/submissions (source api) and POST /f/{id} (source
// form); every other request passes through untouched. The outcome follows from the answer's
// status; the refusal reason from the JSON error body when there is one (a browser's HTML
// answer gives its status's code). A post the spam policy refuses silently is answered as if
// stored and counted as stored here; formward_spam_total counts it by reason.
func (m *Metrics) CaptureRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		source := captureSource(r)
		if source == "" {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		code, details := rec.problem()
		outcome := captureOutcome(status, code)
		m.captures.WithLabelValues(source, outcome).Inc()
		m.captureDuration.WithLabelValues(source, outcome).Observe(time.Since(start).Seconds())
		if outcome == OutcomeInvalid {
			if code == "" {
				code = statusCode(status)
			}
			if len(details) == 0 {
				details = []string{code}
			}
			for _, d := range details {
				m.refusals.WithLabelValues(source, m.refusalReasons.value(d)).Inc()
			}
		}
	})
}

// captureSource names the capture route of r, or "".
func captureSource(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/f/"); ok && rest != "" && !strings.Contains(rest, "/") {
		return SourceForm
	}
	if rest, ok := strings.CutPrefix(p, "/v1/forms/"); ok {
		if id, ok := strings.CutSuffix(rest, "/submissions"); ok && id != "" && !strings.Contains(id, "/") {
			return SourceAPI
		}
	}
	return ""
}

// captureOutcome maps an answer to its outcome: the error codes are those of docs/api.md.
func captureOutcome(status int, code string) string {
	switch {
	case status < 400:
		return OutcomeStored
	case code == "rejected":
		return OutcomeSpam
	case code == "form_closed":
		return OutcomeClosed
	case status == http.StatusTooManyRequests:
		return OutcomeRateLimited
	case status == http.StatusServiceUnavailable:
		return OutcomeUnavailable
	case status >= 500:
		return OutcomeError
	case status == http.StatusForbidden && code == "":
		// A browser's post refused by the spam policy gets an HTML page.
		return OutcomeSpam
	case status == http.StatusConflict && code == "":
		return OutcomeClosed
	}
	return OutcomeInvalid
}

// statusCode is the error code of a status when the body did not say (HTML answers).
func statusCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	case http.StatusUnprocessableEntity:
		return "validation_failed"
	}
	return "other"
}

// maxErrorBody is the most of an error answer kept to read its code.
const maxErrorBody = 16 << 10

// recorder notes the status and, for an uncompressed JSON error answer, its first bytes.
type recorder struct {
	http.ResponseWriter
	status int
	body   *bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		h := r.Header()
		if status >= 400 && h.Get("Content-Encoding") == "" && strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			r.body = &bytes.Buffer{}
		}
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.body != nil && r.body.Len() < maxErrorBody {
		r.body.Write(b[:min(len(b), maxErrorBody-r.body.Len())])
	}
	return r.ResponseWriter.Write(b)
}

// Flush keeps streaming answers streaming.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// problem reads {"error": {"code", "details": [{"code"}]}} from a JSON error answer.
func (r *recorder) problem() (code string, details []string) {
	if r.body == nil {
		return "", nil
	}
	var b struct {
		Error struct {
			Code    string `json:"code"`
			Details []struct {
				Code string `json:"code"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body.Bytes(), &b) != nil {
		return "", nil
	}
	seen := map[string]bool{}
	for _, d := range b.Error.Details {
		if d.Code != "" && !seen[d.Code] {
			seen[d.Code] = true
			details = append(details, d.Code)
		}
	}
	return b.Error.Code, details
}
