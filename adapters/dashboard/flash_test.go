package dashboard_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/ports"
)

// Secrets shown once come from a one-time flash: the post answers 303, the page it leads to
// shows the secret, a reload of that page does not (and says why), nothing is made twice, and
// the flash is sealed at rest.

// flashRows returns the sealed payloads of the stored flashes.
func flashRows(t *testing.T, db *persistence.DB) [][]byte {
	t.Helper()
	rows, err := db.SQL().Query("SELECT sealed FROM flashes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func count(t *testing.T, db *persistence.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNewKeyShownOnceFromFlash: creating a key answers 303; the page shows the key once, from a
// sealed flash; a reload shows it no more and says so; exactly one key was made.
func TestNewKeyShownOnceFromFlash(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		loc := owner.post("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-write"}}).
			redirectsTo(t, "/app/settings/api-keys?shown=").Header.Get("Location")

		// At rest, before the page is drawn: one flash, sealed (the key's text is nowhere in it).
		sealed := flashRows(t, db)
		if len(sealed) != 1 {
			t.Fatalf("%d flashes after creating a key, want 1", len(sealed))
		}

		shown := owner.get(loc).expect(t, http.StatusOK)
		token := newKey.FindStringSubmatch(shown.body)
		if token == nil || shown.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("the page after creating a key (Cache-Control %q): %s", shown.Header.Get("Cache-Control"), text(shown.body))
		}
		if strings.Contains(string(sealed[0]), token[1]) || strings.Contains(string(sealed[0]), token[1][len(token[1])-16:]) {
			t.Fatal("the flash holds the key in clear")
		}
		if !strings.Contains(text(shown.body), "Key created.") {
			t.Fatalf("no notice: %s", text(shown.body))
		}
		if n := len(flashRows(t, db)); n != 0 {
			t.Fatalf("%d flashes left after the page took it", n)
		}

		again := owner.get(loc).expect(t, http.StatusOK)
		if strings.Contains(again.body, token[1]) || !strings.Contains(text(again.body), "was shown once") {
			t.Fatalf("reload of the page: %s", text(again.body))
		}
		if n := count(t, db, "SELECT COUNT(*) FROM api_keys"); n != 1 {
			t.Fatalf("%d keys, want 1", n)
		}
		// Another session of the same person cannot take a flash: a fresh one shows the key nowhere.
		loc = owner.post("/app/settings/api-keys", url.Values{"name": {"Zapier"}, "scope": {"read-only"}}).
			redirectsTo(t, "/app/settings/api-keys?shown=").Header.Get("Location")
		other := h.browser()
		other.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}).redirectsTo(t, "/app")
		if p := other.get(loc).expect(t, http.StatusOK); newKey.MatchString(p.body) {
			t.Fatal("another session took the flash")
		}
		if p := owner.get(loc).expect(t, http.StatusOK); !newKey.MatchString(p.body) {
			t.Fatalf("the session that made the key lost its flash to another: %s", text(p.body))
		}

		// A refused post draws the form again with 422, keeping what was typed, and makes nothing.
		bad := owner.post("/app/settings/api-keys", url.Values{"name": {"CI two"}, "scope": {"root"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(bad.body, `value="CI two"`) {
			t.Fatalf("the refused post lost the name: %s", text(bad.body))
		}
		if n := count(t, db, "SELECT COUNT(*) FROM api_keys"); n != 2 {
			t.Fatalf("%d keys, want 2", n)
		}
	})
}

// TestConcurrentReadsShowTheKeyOnce: of several loads of the page at once, one shows the key.
func TestConcurrentReadsShowTheKeyOnce(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		loc := owner.post("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-write"}}).
			redirectsTo(t, "/app/settings/api-keys?shown=").Header.Get("Location")
		const readers = 6
		start := make(chan struct{})
		bodies := make(chan string, readers)
		var wg sync.WaitGroup
		for range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := owner.client.Get(h.server.URL + loc)
				if err != nil {
					bodies <- "error: " + err.Error()
					return
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				bodies <- string(raw)
			}()
		}
		close(start)
		wg.Wait()
		close(bodies)
		shown := 0
		for b := range bodies {
			switch {
			case newKey.MatchString(b):
				shown++
			case !strings.Contains(text(b), "was shown once"):
				t.Fatalf("a concurrent load: %s", text(b))
			}
		}
		if shown != 1 {
			t.Fatalf("%d of %d concurrent loads showed the key, want 1", shown, readers)
		}
	})
}

// TestInvitationLinkShownOnceFromFlash: inviting answers 303; the members page shows the link
// once; a reload does not; exactly one invitation exists and the link works.
func TestInvitationLinkShownOnceFromFlash(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		loc := owner.post("/app/settings/invitations", url.Values{"email": {"grace@example.org"}, "role": {"editor"}}).
			redirectsTo(t, "/app/settings/members?shown=").Header.Get("Location")
		sealed := flashRows(t, db)
		if len(sealed) != 1 || strings.Contains(string(sealed[0]), "/app/invitations/") || strings.Contains(string(sealed[0]), "grace@example.org") {
			t.Fatalf("the invitation's flash is not sealed: %d rows", len(sealed))
		}
		shown := owner.get(loc).expect(t, http.StatusOK)
		link := acceptLink.FindString(shown.body)
		if link == "" || shown.Header.Get("Cache-Control") != "no-store" || !strings.Contains(text(shown.body), "Invitation created for grace@example.org.") {
			t.Fatalf("the page after inviting: %s", text(shown.body))
		}
		if strings.Contains(string(sealed[0]), link) {
			t.Fatal("the flash holds the link in clear")
		}
		again := owner.get(loc).expect(t, http.StatusOK)
		if acceptLink.MatchString(again.body) || !strings.Contains(text(again.body), "was shown once") {
			t.Fatalf("reload of the members page: %s", text(again.body))
		}
		if n := count(t, db, "SELECT COUNT(*) FROM invitations"); n != 1 {
			t.Fatalf("%d invitations, want 1", n)
		}
		b := h.browser()
		b.get(link).expect(t, http.StatusOK)
		b.post(link, url.Values{"name": {"Grace Hopper"}, "password": {"compiler-cobol-1959"}}).redirectsTo(t, "/app/forms")

		// A refused invitation keeps the address typed, with 422.
		bad := owner.post("/app/settings/invitations", url.Values{"email": {"not an address"}, "role": {"editor"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(bad.body, `value="not an address"`) {
			t.Fatalf("the refused invitation lost the address: %s", text(bad.body))
		}
	})
}

var recoveryCode = regexp.MustCompile(`<li>([A-Za-z0-9\-]{6,})</li>`)

// TestRecoveryCodesShownOnceFromFlash: turning two-step verification on answers 303; the
// profile shows the ten codes once, from a sealed flash; a reload does not.
func TestRecoveryCodesShownOnceFromFlash(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		owner.post("/app/settings/profile/two-factor", url.Values{}).redirectsTo(t, "/app/settings/profile/two-factor")
		setup := owner.get("/app/settings/profile/two-factor").expect(t, http.StatusOK)
		secret := regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`).FindStringSubmatch(setup.body)
		if secret == nil {
			t.Fatalf("no secret on the setup page: %s", text(setup.body))
		}
		// A reload of the setup page shows the same secret: nothing was started again.
		if again := owner.get("/app/settings/profile/two-factor").expect(t, http.StatusOK); !strings.Contains(again.body, secret[1]) {
			t.Fatal("a reload of the setup page changed the secret")
		}
		code, err := totp.GenerateCode(secret[1], time.Now())
		if err != nil {
			t.Fatal(err)
		}
		loc := owner.post("/app/settings/profile/two-factor/confirm", url.Values{"code": {code}}).
			redirectsTo(t, "/app/settings/profile?shown=").Header.Get("Location")
		sealed := flashRows(t, db)
		if len(sealed) != 1 {
			t.Fatalf("%d flashes, want 1", len(sealed))
		}
		shown := owner.get(loc).expect(t, http.StatusOK)
		codes := recoveryCode.FindAllStringSubmatch(shown.body, -1)
		if len(codes) != 10 || shown.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("recovery codes: %d shown: %s", len(codes), text(shown.body))
		}
		for _, c := range codes {
			if strings.Contains(string(sealed[0]), c[1]) {
				t.Fatal("the flash holds a recovery code in clear")
			}
		}
		again := owner.get(loc).expect(t, http.StatusOK)
		if recoveryCode.MatchString(again.body) || !strings.Contains(text(again.body), "were shown once") {
			t.Fatalf("reload of the profile: %s", text(again.body))
		}
		if !strings.Contains(text(again.body), "10 recovery codes left") {
			t.Fatalf("the profile after turning it on: %s", text(again.body))
		}
	})
}

// refusingFlashes cannot keep a flash.
type refusingFlashes struct{ ports.FlashRepository }

func (refusingFlashes) Put(context.Context, ports.Flash) error {
	return errors.New("flashes unavailable")
}

// TestSecretIsNotLostWhenItsFlashCannotBeKept: when the flash cannot be stored, the post draws
// the new key itself (not cached) rather than lose it.
func TestSecretIsNotLostWhenItsFlashCannotBeKept(t *testing.T) {
	h := newHarnessWith(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil),
		func(d *application.Deps, _ *dashboard.Options) { d.Flashes = refusingFlashes{} })
	owner := h.owner()
	p := owner.post("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-write"}}).expect(t, http.StatusCreated)
	if !newKey.MatchString(p.body) || p.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the key after its flash failed (Cache-Control %q): %s", p.Header.Get("Cache-Control"), text(p.body))
	}
}
