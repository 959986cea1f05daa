package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/ports"
)

// burstDeadline bounds how long a burst test waits for what it expects before failing.
const burstDeadline = 30 * time.Second

// heldHasher is the real argon2id hasher whose checks announce themselves on entered and wait
// until release is closed, so a test sees how many passwords are being checked at once.
type heldHasher struct {
	ports.PasswordHasher
	mu      sync.Mutex
	entered chan struct{}
	release chan struct{}
}

func (h *heldHasher) Verify(encoded, password string) bool {
	h.mu.Lock()
	entered, release := h.entered, h.release
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
		<-release
	}
	return h.PasswordHasher.Verify(encoded, password)
}

// hold starts holding checks until the returned release (called at the latest when the test ends).
func (h *heldHasher) hold(t *testing.T) (<-chan struct{}, func()) {
	entered, rel := make(chan struct{}, 100), make(chan struct{})
	h.mu.Lock()
	h.entered, h.release = entered, rel
	h.mu.Unlock()
	release := sync.OnceFunc(func() {
		h.mu.Lock()
		h.entered, h.release = nil, nil
		h.mu.Unlock()
		close(rel)
	})
	t.Cleanup(release)
	return entered, release
}

// heldSignIns starts a dashboard with its owner whose password checks are held from now on
// (see heldHasher.hold); login posts a password for the owner from a new browser on a goroutine
// of its own and sends the answer to answers. Logins still held when the test fails end before
// the server closes: release (a cleanup registered later) runs first, then their wait.
func heldSignIns(t *testing.T, db *persistence.DB) (h *harness, entered <-chan struct{}, release func(), login func(password string, answers chan<- page)) {
	hasher := &heldHasher{PasswordHasher: cheapHasher()}
	h = newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
		d.Passwords = hasher
	})
	h.owner()
	var inFlight sync.WaitGroup
	t.Cleanup(inFlight.Wait)
	entered, release = hasher.hold(t)
	login = func(password string, answers chan<- page) {
		b := h.browser()
		inFlight.Go(func() { answers <- b.try("/app/login", url.Values{"email": {ownerEmail}, "password": {password}}) })
	}
	return h, entered, release, login
}

func cheapHasher() ports.PasswordHasher {
	// Cheap argon2id parameters: the tests check behaviour, not the cost.
	return crypto.NewPasswordHasherWithParams(crypto.Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
}

// TestSignInBurstIsThrottledExactly: forty wrong passwords posted at once, on both databases,
// with every password check held. Each attempt takes its place in the failure count before its
// password is checked, so ten are being checked and thirty get 429 with Retry-After; the right
// password posted while the ten are held gets 429 too, without a check; the ten then get 401.
func TestSignInBurstIsThrottledExactly(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h, entered, release, login := heldSignIns(t, db)
		answers := make(chan page, 41)
		post := func(password string) { login(password, answers) }
		for range 40 {
			post("not the password at all")
		}
		checking, refused := 0, 0
		deadline := time.After(burstDeadline)
		for checking < accounts.SignInFailureLimit || refused < 40-accounts.SignInFailureLimit {
			select {
			case <-entered:
				checking++
				if checking > accounts.SignInFailureLimit {
					t.Fatalf("%d passwords of the burst are being checked at once, want at most %d", checking, accounts.SignInFailureLimit)
				}
			case p := <-answers:
				if p.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("an attempt beyond the first ten: %d, want 429", p.StatusCode)
				}
				if s, err := strconv.Atoi(p.Header.Get("Retry-After")); err != nil || s < 1 {
					t.Fatalf("429 with Retry-After %q", p.Header.Get("Retry-After"))
				}
				refused++
			case <-deadline:
				t.Fatalf("after %s: %d passwords being checked, %d attempts refused", burstDeadline, checking, refused)
			}
		}

		post(ownerPassword)
		select {
		case p := <-answers:
			if p.StatusCode != http.StatusTooManyRequests || cookieOf(p.Response, dashboard.SessionCookie) != nil {
				t.Fatalf("the right password posted during the burst: %d, want 429 and no session", p.StatusCode)
			}
		case <-entered:
			t.Fatal("the right password posted during the burst was checked")
		case <-time.After(burstDeadline):
			t.Fatal("the right password posted during the burst got no answer")
		}

		release()
		for range accounts.SignInFailureLimit {
			if p := <-answers; p.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a checked wrong password: %d, want 401", p.StatusCode)
			}
		}
		h.browser().post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}).expect(t, http.StatusTooManyRequests)
	})
}

// TestRightPasswordInABurstIsRefused: the right password takes one of the ten places of a
// burst (posted with nine wrong ones, all held in their checks); thirty more wrong ones are
// refused while they are held. When the checks end, the right password is refused as well
// (429, no session): it was checked while the count was full. An honest last try, after nine
// failures and without a burst, signs in.
func TestRightPasswordInABurstIsRefused(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		_, entered, release, post := heldSignIns(t, db)
		wrong, right := make(chan page, 40), make(chan page, 1)
		waitChecks := func(n int) {
			t.Helper()
			for range n {
				select {
				case <-entered:
				case <-time.After(burstDeadline):
					t.Fatalf("fewer than %d passwords are being checked", n)
				}
			}
		}
		post(ownerPassword, right)
		waitChecks(1)
		for range accounts.SignInFailureLimit - 1 {
			post("not the password at all", wrong)
		}
		waitChecks(accounts.SignInFailureLimit - 1)
		for range 30 {
			post("not the password at all", wrong)
		}
		for range 30 {
			if p := <-wrong; p.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("an attempt beyond the first ten: %d, want 429", p.StatusCode)
			}
		}

		release()
		p := <-right
		if p.StatusCode != http.StatusTooManyRequests || cookieOf(p.Response, dashboard.SessionCookie) != nil {
			t.Fatalf("the right password checked during the burst: %d, want 429 and no session", p.StatusCode)
		}
		if s, err := strconv.Atoi(p.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("429 with Retry-After %q", p.Header.Get("Retry-After"))
		}
		for range accounts.SignInFailureLimit - 1 {
			if p := <-wrong; p.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a checked wrong password: %d, want 401", p.StatusCode)
			}
		}
	})
}

// TestHonestLastTrySignsIn: nine wrong passwords, one after another, then the right one: no
// burst, so the tenth place is given back and a session starts.
func TestHonestLastTrySignsIn(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			d.Passwords = cheapHasher()
		})
		h.owner()
		for range accounts.SignInFailureLimit - 1 {
			h.browser().post("/app/login", url.Values{"email": {ownerEmail}, "password": {"not the password at all"}}).expect(t, http.StatusUnauthorized)
		}
		p := h.browser().post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}})
		if cookieOf(p.Response, dashboard.SessionCookie) == nil {
			t.Fatalf("the right password after nine failures: %d and no session", p.StatusCode)
		}
	})
}

// try posts form to path as post does, but reports a failed request as status 0 instead of
// failing the test, so that it can run on a goroutine of its own.
func (b *browser) try(path string, form url.Values) page {
	req, err := http.NewRequest(http.MethodPost, b.h.server.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		return page{Response: &http.Response{}}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.client.Do(req)
	if err != nil {
		return page{Response: &http.Response{Request: req}}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{Response: resp, body: string(raw)}
}

// recordingMailer records account mail, and hands each on arrived when that is set.
type recordingMailer struct {
	mu      sync.Mutex
	sent    []ports.Mail
	arrived chan ports.Mail
}

func (m *recordingMailer) Send(_ context.Context, mail ports.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, mail)
	if m.arrived != nil {
		m.arrived <- mail
	}
	return nil
}

func (m *recordingMailer) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// queuedMail counts the account mail outbox's rows.
func queuedMail(t *testing.T, db *persistence.DB) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM account_mail").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForgotPasswordAnswersAlikeAndSendsNothingItself, on both databases: an address with an
// account and one without get the same status and the same page; the request never calls the
// mailer (the mail is queued in the account mail outbox, sent after the answer); five requests
// per address and per client address are queued in an hour, and the sixth, answered alike,
// queues nothing.
func TestForgotPasswordAnswersAlikeAndSendsNothingItself(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		mailer := &recordingMailer{}
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, o *dashboard.Options) {
			d.Mailer = mailer
			o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		})
		h.owner()
		forgot := func(email, client string) page {
			t.Helper()
			return h.browser().post("/app/forgot-password", url.Values{"email": {email}}, "X-Forwarded-For", client).expect(t, http.StatusSeeOther)
		}

		known := forgot(ownerEmail, "127.0.5.1")
		unknown := forgot("nobody@example.org", "127.0.5.2")
		if known.body != unknown.body {
			t.Fatalf("forgot password answers differ:\n%s\n%s", text(known.body), text(unknown.body))
		}
		if n := mailer.count(); n != 0 {
			t.Fatalf("the request called the mailer %d times: the mail must be sent after the answer", n)
		}
		if n := queuedMail(t, db); n != 2 {
			t.Fatalf("%d requests queued, want 2 (with and without an account alike)", n)
		}

		// Per address: four more from other clients fill the hour's five; the sixth queues nothing.
		for i := range accounts.PasswordResetLimit {
			p := forgot(ownerEmail, "127.0.6."+strconv.Itoa(i+1))
			if p.body != known.body {
				t.Fatalf("request %d answers otherwise:\n%s", i+2, text(p.body))
			}
		}
		if n := queuedMail(t, db); n != 2+accounts.PasswordResetLimit-1 {
			t.Fatalf("%d requests queued, want %d: the sixth for one address in an hour is not", n, 2+accounts.PasswordResetLimit-1)
		}

		// Per client address: five addresses from one client, then a sixth.
		for i := range accounts.PasswordResetLimit + 1 {
			p := forgot("guess"+strconv.Itoa(i)+"@example.org", "127.0.7.1")
			if p.body != known.body {
				t.Fatalf("request from one client %d answers otherwise:\n%s", i+1, text(p.body))
			}
		}
		if n := queuedMail(t, db); n != 2+accounts.PasswordResetLimit-1+accounts.PasswordResetLimit {
			t.Fatalf("%d requests queued, want %d: the sixth from one client in an hour is not", n, 2+2*accounts.PasswordResetLimit-1)
		}
		if n := mailer.count(); n != 0 {
			t.Fatalf("requests called the mailer %d times", n)
		}
	})
}

// TestForgotPasswordThrottleReadsEveryForwardedForLine, on both databases: a trusted proxy that
// adds an X-Forwarded-For line of its own, after the one the client sent, names the client
// there. The per-client limit counts that address, so six requests whose first lines all
// differ but whose proxy line is the same are one client's: the sixth queues nothing.
func TestForgotPasswordThrottleReadsEveryForwardedForLine(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, o *dashboard.Options) {
			d.Mailer = &recordingMailer{}
			o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		})
		for i := range accounts.PasswordResetLimit + 1 {
			h.browser().post("/app/forgot-password", url.Values{"email": {"guess" + strconv.Itoa(i) + "@example.org"}},
				"X-Forwarded-For", "198.51.100."+strconv.Itoa(i+1), "X-Forwarded-For", "127.0.9.1").expect(t, http.StatusSeeOther)
		}
		if n := queuedMail(t, db); n != accounts.PasswordResetLimit {
			t.Fatalf("%d requests queued, want %d: the proxy's line names one client for all six", n, accounts.PasswordResetLimit)
		}
	})
}

// TestForgotPasswordLinkArrivesAfterTheAnswer, on both databases: with the account mail sender
// running, as serve runs it, the link arrives after the answer and sets a new password.
func TestForgotPasswordLinkArrivesAfterTheAnswer(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		mailer := &recordingMailer{arrived: make(chan ports.Mail, 10)}
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			d.Mailer = mailer
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.app.AccountMail.Run(ctx, failOnMailError{t})
		}()
		t.Cleanup(func() { cancel(); <-done })
		h.owner()

		h.browser().post("/app/forgot-password", url.Values{"email": {"nobody@example.org"}}).expect(t, http.StatusSeeOther)
		h.browser().post("/app/forgot-password", url.Values{"email": {ownerEmail}}).expect(t, http.StatusSeeOther)
		var m ports.Mail
		select {
		case m = <-mailer.arrived:
		case <-time.After(burstDeadline):
			t.Fatal("no password link arrived")
		}
		link := regexp.MustCompile(`http://127\.0\.0\.1:8080(/app/reset-password\?token=(\S+))`).FindStringSubmatch(m.Text)
		if m.To != ownerEmail || link == nil {
			t.Fatalf("mail to %q:\n%s", m.To, m.Text)
		}
		token, _ := url.QueryUnescape(link[2])
		b := h.browser()
		b.get(link[1]).expect(t, http.StatusOK)
		b.post("/app/reset-password", url.Values{"token": {token}, "password": {"a brand new passphrase"}}).redirectsTo(t, "/app/login")
		b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {"a brand new passphrase"}}).redirectsTo(t, "/app")
		// The request without an account was queued first, so it was handled (sending nothing)
		// before the link went out.
		if n := mailer.count(); n != 1 {
			t.Fatalf("%d mails sent, want 1 (none to the address without an account)", n)
		}
	})
}

// failOnMailError fails the test when the account mail sender reports a failure.
type failOnMailError struct{ t *testing.T }

func (o failOnMailError) Failed(kind string, attempt int, gaveUp bool, err error) {
	o.t.Errorf("account mail %s attempt %d failed (gave up %v): %v", kind, attempt, gaveUp, err)
}
