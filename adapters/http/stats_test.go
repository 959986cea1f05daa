package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/adapters/web"
)

var pageToken = regexp.MustCompile(`name="_token" value="([^"]+)"`)

// withPublicPages mounts the public form pages on the harness's router, as the serve role does.
func (h *harness) withPublicPages() {
	h.t.Helper()
	p, err := web.New(web.Deps{App: h.app, Clock: system.Clock{}, Logger: zap.NewNop()},
		web.Options{TokenKey: []byte("token key"), PoWKey: []byte("pow key"), RateLimit: -1})
	if err != nil {
		h.t.Fatal(err)
	}
	p.Mount(h.handler.(*httpapi.Router).Engine)
}

// public sends a request to a public page (no key, no OpenAPI check).
func (h *harness) public(method, path string, form url.Values) *httptest.ResponseRecorder {
	h.t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

// view renders the public page and returns its render token.
func (h *harness) view(formID string) string {
	h.t.Helper()
	rec := h.public("GET", "/f/"+formID, nil)
	if rec.Code != 200 {
		h.t.Fatalf("GET /f/%s: %d %s", formID, rec.Code, rec.Body.String())
	}
	m := pageToken.FindStringSubmatch(rec.Body.String())
	if m == nil {
		h.t.Fatal("no render token on the page")
	}
	return m[1]
}

func (h *harness) publishedForm(name string) (string, string) {
	h.t.Helper()
	r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": name,
		"fields":   []map[string]any{{"label": "Name", "type": "text"}},
		"settings": map[string]any{"spam": map[string]any{"min_fill_seconds": 0, "proof_of_work": false}}})
	h.expect(r, 201, "")
	id := r.json["id"].(string)
	h.expect(h.do("PATCH", "/v1/forms/"+id, h.keys["admin"], map[string]any{"status": "published"}), 200, "")
	return id, fieldIDs(r.json)[0]
}

func TestFormStats(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		h.withPublicPages()
		id, field := h.publishedForm("Signup")

		stats := func(key, query string) response {
			t.Helper()
			r := h.do("GET", "/v1/forms/"+id+"/stats"+query, key, nil)
			h.expect(r, 200, "")
			return r
		}
		// Nothing yet: thirty days of zeros, no rate, no median.
		r := stats(h.keys["read-only"], "")
		daily := r.json["daily"].([]any)
		today := time.Now().UTC().Format("2006-01-02")
		if len(daily) != 30 || daily[29].(map[string]any)["date"] != today || r.json["views"] != 0.0 ||
			r.json["completion_rate"] != nil || r.json["median_seconds_to_complete"] != nil {
			t.Fatalf("empty stats: %v", r.json)
		}

		tok1, tok2 := h.view(id), h.view(id)
		h.view(id)
		// A start counts once per rendered page; a token of no page of this form counts nothing.
		for _, tok := range []string{tok1, tok1, tok2} {
			if rec := h.public("POST", "/f/"+id+"/start", url.Values{"_token": {tok}}); rec.Code != 204 {
				t.Fatalf("start: %d %s", rec.Code, rec.Body.String())
			}
		}
		if rec := h.public("POST", "/f/"+id+"/start", url.Values{"_token": {"1.abc.def"}}); rec.Code != 400 {
			t.Fatalf("start with a forged token: %d", rec.Code)
		}
		if rec := h.public("POST", "/f/"+id+"/start", nil); rec.Code != 400 {
			t.Fatalf("start without a token: %d", rec.Code)
		}
		// One submission from a page, one through the API.
		rec := h.public("POST", "/f/"+id, url.Values{"_token": {tok1}, field: {"Ada"}})
		if rec.Code >= 400 {
			t.Fatalf("public post: %d %s", rec.Code, rec.Body.String())
		}
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{field: "Bob"}}), 201, "")

		r = stats(h.keys["read-only"], "?days=7")
		if r.json["views"] != 3.0 || r.json["starts"] != 2.0 || r.json["submissions"] != 2.0 {
			t.Fatalf("stats: %v", r.json)
		}
		if rate, _ := r.json["completion_rate"].(float64); rate < 0.333 || rate > 0.334 {
			t.Fatalf("completion rate %v, want 1/3", r.json["completion_rate"])
		}
		// The page was posted within a second of its render: the first bucket, (0 s, 5 s].
		if m, ok := r.json["median_seconds_to_complete"].(float64); !ok || m <= 0 || m > 5 {
			t.Fatalf("median %v", r.json["median_seconds_to_complete"])
		}
		daily = r.json["daily"].([]any)
		last := daily[len(daily)-1].(map[string]any)
		if len(daily) != 7 || last["date"] != today || last["views"] != 3.0 || last["starts"] != 2.0 || last["submissions"] != 2.0 {
			t.Fatalf("daily: %v", daily)
		}

		// Counts add up across flushes (the stored day grows).
		h.view(id)
		if r := stats(h.keys["admin"], ""); r.json["views"] != 4.0 {
			t.Fatalf("views after another page: %v", r.json["views"])
		}

		// A form deleted before its counts are written: they are dropped, the others are kept.
		gone, _ := h.publishedForm("Gone")
		h.view(gone)
		h.view(id)
		h.expect(h.do("DELETE", "/v1/forms/"+gone, h.keys["admin"], nil), 204, "")
		if err := h.activity.Flush(context.Background()); err != nil {
			t.Fatalf("flush with a deleted form: %v", err)
		}
		if r := stats(h.keys["read-only"], ""); r.json["views"] != 5.0 {
			t.Fatalf("views: %v", r.json["views"])
		}

		for _, bad := range []string{"?days=0", "?days=367", "?days=x"} {
			h.expect(h.do("GET", "/v1/forms/"+id+"/stats"+bad, h.keys["read-only"], nil), 400, "invalid_request")
		}
		h.expect(h.do("GET", "/v1/forms/"+id+"/stats", h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms/"+gone+"/stats", h.keys["admin"], nil), 404, "not_found")
	})
}
