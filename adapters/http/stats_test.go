package httpapi_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
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
		// Completion: the page's submission over the two starts (the API's has no start).
		if rate, _ := r.json["completion_rate"].(float64); rate != 0.5 {
			t.Fatalf("completion rate %v, want 1/2", r.json["completion_rate"])
		}
		if by := r.json["submissions_by_source"].(map[string]any); by["form"] != 1.0 || by["api"] != 1.0 {
			t.Fatalf("submissions by source: %v", by)
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
		gone, goneField := h.publishedForm("Gone")
		h.view(gone)
		h.view(id)
		h.expect(h.do("POST", "/v1/forms/"+gone+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{goneField: "Eve"}}), 201, "")
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

// TestFormStatsCountAnswers sends 1,000 API submissions with random answers to choice,
// checkbox and number fields, then compares every per-question figure of GET /stats with a
// count of the stored answers read back through the submissions list.
func TestFormStatsCountAnswers(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		colours := []string{"Red", "Green", "Blue"}
		sizes := []string{"S", "M", "L", "XL"}
		toppings := []string{"Cheese", "Ham", "Olives", "Basil"}
		f := h.createForm(
			map[string]any{"label": "Colour", "type": "radio", "options": colours},
			map[string]any{"label": "Size", "type": "dropdown", "options": sizes},
			map[string]any{"label": "Toppings", "type": "checkbox", "options": toppings},
			map[string]any{"label": "Quantity", "type": "number"},
			map[string]any{"label": "Newsletter", "type": "checkbox"},
			map[string]any{"label": "Note", "type": "text"},
		)
		id := f["id"].(string)
		ids := fieldIDs(f)
		colour, size, topping, qty, news, note := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]

		rng := rand.New(rand.NewPCG(24, 2))
		const n = 1000
		for i := 0; i < n; i++ {
			data := map[string]any{}
			if rng.IntN(10) > 0 {
				data[colour] = colours[rng.IntN(len(colours))]
			}
			if rng.IntN(4) > 0 {
				data[size] = sizes[rng.IntN(len(sizes))]
			}
			var chosen []string
			for _, o := range toppings {
				if rng.IntN(2) == 0 {
					chosen = append(chosen, o)
				}
			}
			if len(chosen) > 0 {
				data[topping] = chosen
			}
			switch rng.IntN(5) {
			case 0: // no answer
			case 1:
				data[qty] = float64(rng.IntN(2000)-1000) / 4 // quarters, negatives too
			default:
				data[qty] = rng.IntN(300)
			}
			if rng.IntN(3) > 0 {
				data[news] = rng.IntN(2) == 0
			}
			if rng.IntN(2) == 0 {
				data[note] = "note " + strconv.Itoa(i)
			}
			h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", h.keys["read-write"], map[string]any{"data": data}), 201, "")
		}

		// The direct count, from the stored answers.
		answered := map[string]int64{}
		options := map[string]map[string]int64{colour: {}, size: {}, topping: {}, news: {}}
		var numbers []float64
		cursor, total := "", 0
		for {
			r := h.do("GET", "/v1/forms/"+id+"/submissions?limit=100"+cursor, h.keys["read-only"], nil)
			h.expect(r, 200, "")
			for _, item := range r.json["data"].([]any) {
				total++
				data := item.(map[string]any)["data"].(map[string]any)
				for fid, v := range data {
					answered[fid]++
					switch x := v.(type) {
					case []any:
						for _, o := range x {
							options[fid][o.(string)]++
						}
					case string:
						if fid == qty {
							num, err := strconv.ParseFloat(x, 64)
							if err != nil {
								t.Fatalf("stored number %q", x)
							}
							numbers = append(numbers, num)
						} else if m, ok := options[fid]; ok {
							m[x]++
						}
					}
				}
			}
			if r.json["has_more"] != true {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(r.json["next_cursor"].(string))
		}
		if total != n {
			t.Fatalf("listed %d submissions, want %d", total, n)
		}
		sort.Float64s(numbers)
		median := numbers[len(numbers)/2]
		if len(numbers)%2 == 0 {
			median = (numbers[len(numbers)/2-1] + median) / 2
		}

		r := h.do("GET", "/v1/forms/"+id+"/stats?days=1", h.keys["read-only"], nil)
		h.expect(r, 200, "")
		by := r.json["submissions_by_source"].(map[string]any)
		if r.json["submissions"] != float64(n) || by["api"] != float64(n) || by["form"] != 0.0 {
			t.Fatalf("submissions %v by source %v", r.json["submissions"], by)
		}
		if r.json["completion_rate"] != nil || len(r.json["pages"].([]any)) != 0 {
			t.Fatalf("API submissions have no start and reach no page: %v %v", r.json["completion_rate"], r.json["pages"])
		}
		stats := r.json["fields"].([]any)
		if len(stats) != len(ids) {
			t.Fatalf("fields: %v", stats)
		}
		for i, s := range stats {
			fs := s.(map[string]any)
			fid := fs["field_id"].(string)
			if fid != ids[i] {
				t.Fatalf("field %d is %s, want %s", i, fid, ids[i])
			}
			if got := int64(fs["answered"].(float64)); got != answered[fid] || got == 0 {
				t.Errorf("%s answered %d, stored %d", fid, got, answered[fid])
			}
			want, choice := options[fid]
			opts, _ := fs["options"].([]any)
			if choice != (opts != nil) {
				t.Errorf("%s options %v", fid, fs["options"])
			}
			for _, o := range opts {
				oc := o.(map[string]any)
				if got := int64(oc["count"].(float64)); got != want[oc["option"].(string)] {
					t.Errorf("%s option %v: %d, stored %d", fid, oc["option"], got, want[oc["option"].(string)])
				}
			}
			if len(opts) != len(want) && fid != news {
				t.Errorf("%s has %d options counted, %d chosen", fid, len(opts), len(want))
			}
			_, hasMin := fs["min"]
			if fid != qty {
				if hasMin {
					t.Errorf("%s has a min: %v", fid, fs)
				}
				continue
			}
			if fs["min"] != numbers[0] || fs["max"] != numbers[len(numbers)-1] || fs["median"] != median {
				t.Errorf("quantity min/median/max %v/%v/%v, stored %v/%v/%v", fs["min"], fs["median"], fs["max"],
					numbers[0], median, numbers[len(numbers)-1])
			}
		}
	})
}

// TestFormStatsStartsAndPagesAddUp follows visits of a two-page form with and without
// JavaScript: a visit keeps its render token across its pages and redrawings, so its start
// counts once whether the script's beacon or its first post reports it, and each page it
// reached counts once.
func TestFormStatsStartsAndPagesAddUp(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		h.withPublicPages()
		r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Order",
			"fields": []map[string]any{{"label": "Name", "type": "text", "required": true},
				{"label": "Colour", "type": "radio", "options": []string{"Red", "Blue"}, "page": 2}},
			"settings": map[string]any{"spam": map[string]any{"min_fill_seconds": 0, "proof_of_work": false}}})
		h.expect(r, 201, "")
		id := r.json["id"].(string)
		ids := fieldIDs(r.json)
		name, colour := ids[0], ids[1]
		h.expect(h.do("PATCH", "/v1/forms/"+id, h.keys["admin"], map[string]any{"status": "published"}), 200, "")
		tokenOf := func(body string) string {
			m := pageToken.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no render token on the page: %s", body)
			}
			return m[1]
		}
		step := func(tok string, page string, values url.Values, status int) string {
			t.Helper()
			values.Set("_token", tok)
			values.Set("_page", page)
			values.Set("_nav", "next")
			rec := h.public("POST", "/f/"+id+"/page", values)
			if rec.Code != status {
				t.Fatalf("page move: %d %s", rec.Code, rec.Body.String())
			}
			return tokenOf(rec.Body.String())
		}
		beacon := func(tok, page string) {
			t.Helper()
			if rec := h.public("POST", "/f/"+id+"/start", url.Values{"_token": {tok}, "_page": {page}}); rec.Code != 204 {
				t.Fatalf("start: %d %s", rec.Code, rec.Body.String())
			}
		}

		// Without JavaScript: Next, then Submit. The second page keeps the visit's token.
		a := h.view(id)
		if next := step(a, "1", url.Values{name: {"Ada"}}, 200); next != a {
			t.Fatalf("the second page has another token: %s, first %s", next, a)
		}
		if rec := h.public("POST", "/f/"+id, url.Values{"_token": {a}, name: {"Ada"}, colour: {"Red"}}); rec.Code >= 400 {
			t.Fatalf("post: %d %s", rec.Code, rec.Body.String())
		}
		// With JavaScript: a beacon on each page, the visit stops on page 2.
		b := h.view(id)
		beacon(b, "1")
		beacon(step(b, "1", url.Values{name: {"Bo"}}, 200), "2")
		// With JavaScript, gone after the first page.
		beacon(h.view(id), "1")
		// Without JavaScript, a refused first post is the start; the page drawn again keeps the token.
		e := h.view(id)
		if again := step(e, "1", url.Values{}, 422); again != e {
			t.Fatal("the page drawn again has another token")
		}
		// A view and nothing more; an API submission.
		h.view(id)
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{name: "Cy", colour: "Red"}}), 201, "")

		r = h.do("GET", "/v1/forms/"+id+"/stats?days=1", h.keys["read-only"], nil)
		h.expect(r, 200, "")
		by := r.json["submissions_by_source"].(map[string]any)
		if r.json["views"] != 5.0 || r.json["starts"] != 4.0 || by["form"] != 1.0 || by["api"] != 1.0 || r.json["completion_rate"] != 0.25 {
			t.Fatalf("views %v starts %v by source %v completion %v", r.json["views"], r.json["starts"], by, r.json["completion_rate"])
		}
		pages := r.json["pages"].([]any)
		p1, p2 := pages[0].(map[string]any), pages[1].(map[string]any)
		if len(pages) != 2 || p1["page"] != 1.0 || p1["reached"] != 4.0 || p2["page"] != 2.0 || p2["reached"] != 2.0 {
			t.Fatalf("pages %v", pages)
		}
		fields := r.json["fields"].([]any)
		opts := fields[1].(map[string]any)["options"].([]any)
		if fields[0].(map[string]any)["answered"] != 2.0 || opts[0].(map[string]any)["count"] != 2.0 || opts[1].(map[string]any)["count"] != 0.0 {
			t.Fatalf("fields %v", fields)
		}
	})
}
