// Package sheets runs the spreadsheet_append workflow action: Google Sheets API v4
// values.append of one row, its cells placed under the sheet's header row by row_mapping,
// authenticated with the workspace's service account (JWT bearer flow).
package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/ports"
)

// Type is the action type; Integration the integration it needs.
const (
	Type        = "spreadsheet_append"
	Integration = "google_sheets"
)

// Defaults of Config.
const (
	DefaultBaseURL  = "https://sheets.googleapis.com"
	DefaultTokenURL = "https://oauth2.googleapis.com/token"
)

// ErrNotConnected fails an action whose workspace has no Google Sheets integration (any more).
var ErrNotConnected = errors.New("google sheets integration is not connected")

// Config locates the Google APIs.
type Config struct {
	// BaseURL is https://sheets.googleapis.com or a proxy/test server (FORMWARD_GOOGLE_SHEETS_URL).
	BaseURL string
	// TokenURL is the OAuth token endpoint (FORMWARD_GOOGLE_TOKEN_URL), also the JWT's aud.
	TokenURL string
	// CAFile is a PEM file of extra CA certificates (FORMWARD_WEBHOOK_CA_FILE).
	CAFile  string
	Timeout time.Duration
	Breaker actionkit.BreakerOptions
}

// Sheets runs spreadsheet_append.
type Sheets struct {
	base     string
	tokenURL string
	http     *http.Client
	breakers *actionkit.Breakers
	tokens   tokenCache
	now      func() time.Time
}

// New builds the runner.
func New(cfg Config) (*Sheets, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL
	}
	c, err := actionkit.NewHTTPClient(cfg.CAFile, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Sheets{
		base: strings.TrimRight(cfg.BaseURL, "/"), tokenURL: cfg.TokenURL, http: c,
		breakers: actionkit.NewBreakers(cfg.Breaker), now: time.Now,
	}, nil
}

// Type is "spreadsheet_append".
func (*Sheets) Type() string { return Type }

// Integration is "google_sheets".
func (*Sheets) Integration() string { return Integration }

var spreadsheetIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate checks spreadsheet_id, sheet_name and row_mapping (a non-empty object of strings).
func (*Sheets) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	if id, ok := c.String("spreadsheet_id", true); ok && !spreadsheetIDRe.MatchString(id) {
		c.Add("spreadsheet_id", "invalid_value", "spreadsheet_id must be the ID from the sheet's URL (letters, digits, - and _)")
	}
	if name, ok := c.String("sheet_name", true); ok && strings.ContainsAny(name, "\r\n") {
		c.Add("sheet_name", "invalid_value", "sheet_name must be one line")
	}
	c.StringMap("row_mapping", true)
	return c.Violations()
}

// Run appends one row.
func (s *Sheets) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	cred, out, ok := actionkit.Prepare(ctx, in, s.Validate, "service_account_json", ErrNotConnected)
	if !ok {
		return out
	}
	return s.breakers.Do(ctx, in.ActionID, func() ports.ActionOutcome { return s.append(ctx, in, cred) })
}

func (s *Sheets) append(ctx context.Context, in ports.ActionInput, cred string) ports.ActionOutcome {
	start := time.Now()
	fail := func(err error) ports.ActionOutcome {
		out := ports.ActionOutcome{Duration: time.Since(start), Err: err}
		var he *httpError
		var ce *credentialError
		switch {
		case errors.As(err, &ce):
			out.Permanent = true
		case errors.As(err, &he):
			out.StatusCode = he.status
			out.Permanent = permanentStatus(he.status)
		}
		return out
	}
	token, ck, err := s.accessToken(ctx, cred)
	if err != nil {
		return fail(err)
	}
	id, _ := in.Config["spreadsheet_id"].(string)
	sheet, _ := in.Config["sheet_name"].(string)
	mapping, _ := actionkit.Check(in.Config).StringMap("row_mapping", true)

	headers, err := s.headerRow(ctx, token, id, sheet)
	if err != nil {
		s.forgetOn401(err, ck)
		return fail(err)
	}
	row, missing := BuildRow(headers, mapping, in)
	if len(missing) > 0 {
		return ports.ActionOutcome{
			Duration: time.Since(start), Permanent: true,
			Err: fmt.Errorf("sheet %q has no column %s in its header row", sheet, strings.Join(quoteAll(missing), ", ")),
		}
	}
	status, err := s.appendRow(ctx, token, id, sheet, row)
	if err != nil {
		s.forgetOn401(err, ck)
		return fail(err)
	}
	return ports.ActionOutcome{StatusCode: status, Duration: time.Since(start)}
}

// forgetOn401 drops a token Google no longer accepts, so the retry fetches a new one.
func (s *Sheets) forgetOn401(err error, ck [32]byte) {
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusUnauthorized {
		s.tokens.drop(ck)
	}
}

// permanentStatus: 429, 5xx, 408 and 401 (token expired meanwhile) may pass later; other 4xx
// (403 no access, 404 no such spreadsheet, 400 no such tab) will not.
func permanentStatus(status int) bool {
	switch {
	case status == http.StatusTooManyRequests, status == http.StatusRequestTimeout, status == http.StatusUnauthorized:
		return false
	case status >= 400 && status < 500:
		return true
	}
	return false
}

// a1Range quotes a sheet name for A1 notation ('Leads 2026'!1:1).
func a1Range(sheet, cells string) string {
	return "'" + strings.ReplaceAll(sheet, "'", "''") + "'!" + cells
}

func (s *Sheets) valuesURL(id, rng, suffix string) string {
	return s.base + "/v4/spreadsheets/" + url.PathEscape(id) + "/values/" + url.PathEscape(rng) + suffix
}

type valueRange struct {
	Range          string     `json:"range,omitempty"`
	MajorDimension string     `json:"majorDimension,omitempty"`
	Values         [][]string `json:"values"`
}

func (s *Sheets) headerRow(ctx context.Context, token, id, sheet string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.valuesURL(id, a1Range(sheet, "1:1"), ""), nil)
	if err != nil {
		return nil, err
	}
	raw, _, err := s.do(req, token, "google sheets (read header row)")
	if err != nil {
		return nil, err
	}
	var vr struct {
		Values [][]any `json:"values"`
	}
	if err := json.Unmarshal(raw, &vr); err != nil {
		return nil, errors.New("google sheets answered an unreadable header row")
	}
	if len(vr.Values) == 0 {
		return nil, nil
	}
	out := make([]string, len(vr.Values[0]))
	for i, v := range vr.Values[0] {
		out[i] = fmt.Sprint(v)
	}
	return out, nil
}

func (s *Sheets) appendRow(ctx context.Context, token, id, sheet string, row []string) (int, error) {
	rng := a1Range(sheet, "A1")
	body, err := json.Marshal(valueRange{Range: rng, MajorDimension: "ROWS", Values: [][]string{row}})
	if err != nil {
		return 0, err
	}
	u := s.valuesURL(id, rng, ":append?valueInputOption=RAW&insertDataOption=INSERT_ROWS")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	_, status, err := s.do(req, token, "google sheets (append)")
	return status, err
}

func (s *Sheets) do(req *http.Request, token, what string) ([]byte, int, error) {
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", what, actionkit.ClientError(req.Context(), err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return nil, resp.StatusCode, &httpError{what: what, status: resp.StatusCode, message: e.Error.Message}
	}
	return raw, resp.StatusCode, nil
}

// BuildRow places the mapped values under the sheet's headers (compared trimmed and without
// regard to case). A mapping value that is a field ID of the submission takes the field's value
// (arrays joined with ", "); any other value is written as it is, after template substitution.
// Unmapped columns stay empty; trailing empty cells are dropped. missing lists the mapped
// headers the sheet does not have.
func BuildRow(headers []string, mapping map[string]string, in ports.ActionInput) (row []string, missing []string) {
	index := map[string]int{}
	for i, h := range headers {
		k := strings.ToLower(strings.TrimSpace(h))
		if _, dup := index[k]; !dup && k != "" {
			index[k] = i
		}
	}
	row = make([]string, len(headers))
	last := -1
	for _, header := range actionkit.SortedKeys(mapping) {
		i, ok := index[strings.ToLower(strings.TrimSpace(header))]
		if !ok {
			missing = append(missing, header)
			continue
		}
		row[i] = cellValue(mapping[header], in)
		if i > last {
			last = i
		}
	}
	return row[:last+1], missing
}

func cellValue(source string, in ports.ActionInput) string {
	if v, ok := in.Fields[source]; ok {
		return fieldText(v)
	}
	if _, ok := in.Labels[source]; ok {
		return "" // a field of the form left empty in this submission
	}
	if strings.Contains(source, "{{") && in.Render != nil {
		return in.Render(source, false)
	}
	return source
}

func fieldText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case []string:
		return strings.Join(t, ", ")
	case []any:
		parts := make([]string, len(t))
		for i, p := range t {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ", ")
	default:
		return fmt.Sprint(t)
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
