package sheets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/sheets"
	"github.com/formward/formward/adapters/sheets/sheetstest"
)

var (
	accountOnce sync.Once
	account     sheetstest.ServiceAccount
)

// serviceAccount is one service account for all the tests: a 2048-bit key takes a while.
func serviceAccount(t *testing.T) sheetstest.ServiceAccount {
	accountOnce.Do(func() { account = sheetstest.NewServiceAccount(t, "formward@proj.iam.gserviceaccount.com", "kid1") })
	return account
}

func setup(t *testing.T) (*sheets.Sheets, *sheetstest.Google) {
	t.Helper()
	ca := actiontest.NewCA(t)
	f := sheetstest.NewGoogle(serviceAccount(t), "sheet-123", "Leads",
		"Submitted", "Name", "Email", "Budget", "Tags", "Source", "Notes")
	url := f.Serve(t, ca)
	s, err := sheets.New(sheets.Config{BaseURL: url, TokenURL: url + "/token", CAFile: ca.File, Timeout: 3 * time.Second,
		Breaker: actionkit.BreakerOptions{Failures: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func config() map[string]any {
	return map[string]any{
		"spreadsheet_id": "sheet-123", "sheet_name": "Leads",
		"row_mapping": map[string]any{
			"Name": "fld_name", "email": "fld_email", "Budget": "fld_budget", "Tags": "fld_tags",
			"Source": "website", "Submitted": "{{submitted_at}}",
		},
	}
}

func creds(t *testing.T) map[string]string {
	return map[string]string{"service_account_json": serviceAccount(t).JSON(t)}
}

func TestContract(t *testing.T) {
	s, _ := setup(t)
	actiontest.Run(t, s, actiontest.Contract{Valid: config(), Credentials: creds(t)})
}

func TestAppendsMappedRow(t *testing.T) {
	s, f := setup(t)
	if s.Integration() != "google_sheets" {
		t.Fatalf("Integration = %q", s.Integration())
	}
	for i := 0; i < 2; i++ {
		out := s.Run(context.Background(), actiontest.Input(config(), creds(t)))
		if out.Err != nil || out.StatusCode != 200 {
			t.Fatalf("Run = %+v", out)
		}
	}
	want := []string{"2026-03-04T05:06:07.890Z", "Ada Lovelace", "ada@example.com", "1500", "urgent, b2b", "website"}
	log := f.Log()
	if len(log.Appended) != 2 || strings.Join(log.Appended[0], "|") != strings.Join(want, "|") {
		t.Fatalf("appended %q, want %q (refused %q)", log.Appended, want, log.Refused)
	}
	if log.AppendRange != "'Leads'!A1" || log.AppendQuery != "valueInputOption=RAW&insertDataOption=INSERT_ROWS" {
		t.Fatalf("append range %q query %q", log.AppendRange, log.AppendQuery)
	}
	if log.TokenCalls != 1 {
		t.Fatalf("token endpoint called %d times, want 1 (cached)", log.TokenCalls)
	}
}

func TestMissingColumnsArePermanent(t *testing.T) {
	s, f := setup(t)
	cfg := config()
	cfg["row_mapping"] = map[string]any{"Name": "fld_name", "Phone": "fld_phone", "Company": "x"}
	out := s.Run(context.Background(), actiontest.Input(cfg, creds(t)))
	if out.Err == nil || !out.Permanent || !strings.Contains(out.Err.Error(), `"Company", "Phone"`) {
		t.Fatalf("Run = %+v (err %v)", out, out.Err)
	}
	if len(f.Log().Appended) != 0 {
		t.Fatal("a row was appended")
	}
}

func TestAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{{429, false}, {500, false}, {503, false}, {403, true}, {404, true}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s, f := setup(t)
			f.Fail(tc.status)
			out := s.Run(context.Background(), actiontest.Input(config(), creds(t)))
			if out.Err == nil || out.Permanent != tc.permanent || out.StatusCode != tc.status {
				t.Fatalf("Run = %+v (err %v), want permanent=%v", out, out.Err, tc.permanent)
			}
		})
	}
	t.Run("unknown spreadsheet", func(t *testing.T) {
		s, _ := setup(t)
		cfg := config()
		cfg["spreadsheet_id"] = "other"
		out := s.Run(context.Background(), actiontest.Input(cfg, creds(t)))
		if out.Err == nil || !out.Permanent || out.StatusCode != 404 {
			t.Fatalf("Run = %+v", out)
		}
	})
}

func TestCredentials(t *testing.T) {
	s, _ := setup(t)
	out := s.Run(context.Background(), actiontest.Input(config(), nil))
	if !errors.Is(out.Err, sheets.ErrNotConnected) || !out.Permanent {
		t.Fatalf("nil credentials: %+v", out)
	}
	out = s.Run(context.Background(), actiontest.Input(config(), map[string]string{"service_account_json": `{"client_email":"x"}`}))
	if out.Err == nil || !out.Permanent {
		t.Fatalf("broken key: %+v", out)
	}
	// A key the token endpoint refuses (another key's signature) is permanent too.
	other := sheetstest.NewServiceAccount(t, "formward@proj.iam.gserviceaccount.com", "kid1")
	out = s.Run(context.Background(), actiontest.Input(config(), map[string]string{"service_account_json": other.JSON(t)}))
	if out.Err == nil || !out.Permanent || out.StatusCode != 400 {
		t.Fatalf("wrong key: %+v (err %v)", out, out.Err)
	}
}

func TestValidatePaths(t *testing.T) {
	s, _ := setup(t)
	vs := s.Validate(map[string]any{"spreadsheet_id": "a/b", "sheet_name": 3, "row_mapping": map[string]any{"Name": 1}})
	got := map[string]string{}
	for _, v := range vs {
		got[v.Key] = v.Code
	}
	want := map[string]string{"spreadsheet_id": "invalid_value", "sheet_name": "invalid_type", "row_mapping.Name": "invalid_type"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
}
