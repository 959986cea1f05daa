package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/domain/retry"
	"github.com/pquerna/otp/totp"
)

// burstDeadline bounds how long a burst test waits for what it expects before failing.
const burstDeadline = 30 * time.Second

// holdBurst sends n sign-ins made by cmd at once with every password check held, and checks
// that exactly SignInFailureLimit of them are being checked while all the others were refused
// with ErrThrottled without a check. It returns the release of the held checks and the
// channel their answers arrive on.
func holdBurst(t *testing.T, h *apptest.AccountsHarness, n int, cmd accounts.SignIn) (release func(), entered <-chan struct{}, answers <-chan error) {
	t.Helper()
	entered, release = h.Passwords.Hold(t)
	out := make(chan error, n)
	for range n {
		go func() {
			_, err := h.App.Commands.SignIn.Handle(context.Background(), cmd)
			out <- err
		}()
	}
	checking, refused := 0, 0
	deadline := time.After(burstDeadline)
	for checking < accounts.SignInFailureLimit || refused < n-accounts.SignInFailureLimit {
		select {
		case <-entered:
			checking++
			if checking > accounts.SignInFailureLimit {
				t.Fatalf("%d passwords of the burst are being checked at once, want at most %d", checking, accounts.SignInFailureLimit)
			}
		case err := <-out:
			if !errors.Is(err, accounts.ErrThrottled) {
				t.Fatalf("an attempt of the burst beyond the first %d: %v, want ErrThrottled", accounts.SignInFailureLimit, err)
			}
			refused++
		case <-deadline:
			t.Fatalf("after %s: %d passwords being checked, %d attempts refused", burstDeadline, checking, refused)
		}
	}
	return release, entered, out
}

// expectRefusedWhileHeld sends cmd while the burst's checks are held: it must be refused
// without a password check of its own.
func expectRefusedWhileHeld(t *testing.T, h *apptest.AccountsHarness, entered <-chan struct{}, cmd accounts.SignIn) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := h.App.Commands.SignIn.Handle(context.Background(), cmd)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, accounts.ErrThrottled) {
			t.Fatalf("the right credentials sent during the burst: %v, want ErrThrottled", err)
		}
	case <-entered:
		t.Fatal("the right credentials sent during the burst had their password checked")
	case <-time.After(burstDeadline):
		t.Fatal("the right credentials sent during the burst got no answer")
	}
}

// Forty wrong passwords sent at once: each takes its place in the failure count before its
// password is checked, so ten are checked and thirty refused, and the right password sent
// while the ten are being checked is refused too.
func TestSignInBurstTakesItsPlacesBeforeChecking(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	h.Passwords.Reset()

	release, entered, answers := holdBurst(t, h, 40, accounts.SignIn{Email: "ada@example.com", Password: "wrong password", IP: "127.0.4.7"})
	expectRefusedWhileHeld(t, h, entered, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, IP: "127.0.3.1"})
	release()
	for range accounts.SignInFailureLimit {
		if err := <-answers; !errors.Is(err, accounts.ErrInvalidCredentials) {
			t.Fatalf("a checked attempt: %v, want ErrInvalidCredentials", err)
		}
	}
	if n := len(h.Passwords.Reset()); n != accounts.SignInFailureLimit {
		t.Fatalf("%d passwords checked in all, want %d", n, accounts.SignInFailureLimit)
	}
	if len(h.Sessions.ByID) != 0 {
		t.Fatal("a session was made")
	}
	// Ten failures stand: the right password alone is refused until the window moves on.
	if _, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword}); !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("after the burst: %v, want ErrThrottled", err)
	}
	h.Advance(accounts.SignInWindow)
	signIn(t, h, "ada@example.com", goodPassword)
}

// The same for the two-step step: forty wrong codes with the right password at once, then the
// right code while ten are being checked.
func TestTwoFactorBurstTakesItsPlacesBeforeChecking(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	secret, _ := enableTwoFactor(t, h, asSession(t, h, in.Token))
	h.Advance(time.Minute)
	code, err := totp.GenerateCode(secret, h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	wrong := "000000"
	if wrong == code {
		wrong = "000001"
	}

	release, entered, answers := holdBurst(t, h, 40, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, TOTPCode: wrong})
	expectRefusedWhileHeld(t, h, entered, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, TOTPCode: code})
	release()
	for range accounts.SignInFailureLimit {
		if err := <-answers; !errors.Is(err, accounts.ErrInvalidTwoFactorCode) {
			t.Fatalf("a checked attempt: %v, want ErrInvalidTwoFactorCode", err)
		}
	}
	if _, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword, TOTPCode: code}); !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("after the burst: %v, want ErrThrottled", err)
	}
}

// A success gives its place back; a right password without the code it needs is no failure.
func TestSignInSuccessGivesItsPlaceBack(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	ctx := context.Background()
	wrong := func() error {
		_, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: "wrong password", IP: "127.0.2.1"})
		return err
	}
	// Thirty successes between nine failures leave nine failures counted: the tenth is still
	// checked, and only then is the account throttled.
	for i := range 30 {
		signIn(t, h, "ada@example.com", goodPassword)
		if i < accounts.SignInFailureLimit-1 {
			if err := wrong(); !errors.Is(err, accounts.ErrInvalidCredentials) {
				t.Fatalf("failure %d: %v", i+1, err)
			}
		}
	}
	if err := wrong(); !errors.Is(err, accounts.ErrInvalidCredentials) {
		t.Fatalf("the tenth failure: %v", err)
	}
	if err := wrong(); !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("the eleventh attempt: %v, want ErrThrottled", err)
	}
	places := 0
	for s := range h.Throttle.Places {
		places += h.Throttle.Count(s, time.Time{})
	}
	// Ten failures, each counted for the account and the address; no success left a place.
	if want := 2 * accounts.SignInFailureLimit; places != want {
		t.Fatalf("%d places taken, want %d (the failures' only)", places, want)
	}
}

// Turning two-factor off checks a password (or code) too: wrong ones count against the account.
func TestDisableTwoFactorIsThrottled(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	ctx := asSession(t, h, in.Token)
	enableTwoFactor(t, h, ctx)
	for range accounts.SignInFailureLimit {
		if err := h.App.Commands.DisableTwoFactor.Handle(ctx, accounts.DisableTwoFactor{Password: "wrong password"}); !errors.Is(err, accounts.ErrInvalidCredentials) {
			t.Fatalf("wrong password: %v", err)
		}
	}
	if err := h.App.Commands.DisableTwoFactor.Handle(ctx, accounts.DisableTwoFactor{Password: goodPassword}); !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("after ten wrong passwords: %v, want ErrThrottled", err)
	}
	h.Advance(accounts.SignInWindow)
	if err := h.App.Commands.DisableTwoFactor.Handle(ctx, accounts.DisableTwoFactor{Password: goodPassword}); err != nil {
		t.Fatal(err)
	}
}

// failingObserver fails the test on any failure of the account mail sender.
type failingObserver struct{ t *testing.T }

func (o failingObserver) Failed(kind string, attempt int, gaveUp bool, err error) {
	o.t.Helper()
	o.t.Fatalf("account mail %s attempt %d failed (gave up: %v): %v", kind, attempt, gaveUp, err)
}

// mailFailures keeps the sender's failures.
type mailFailures struct {
	mu       sync.Mutex
	failures []string
}

func (o *mailFailures) Failed(kind string, attempt int, gaveUp bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures = append(o.failures, fmt.Sprintf("%s #%d gave up %v: %v", kind, attempt, gaveUp, err))
}

// sendQueuedMail runs the account mail sender once, as serve does after each request.
func sendQueuedMail(t *testing.T, h *apptest.AccountsHarness) int {
	t.Helper()
	n, err := h.App.AccountMail.SendDue(context.Background(), failingObserver{t})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// "Forgot password": five requests per hour per address and per IP hash are queued, whether
// or not the address has an account; the sixth answers alike and queues nothing.
func TestPasswordResetRequestsAreLimited(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	ctx := context.Background()
	request := func(email, ip string) {
		t.Helper()
		if err := h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: email, IP: ip}); err != nil {
			t.Fatalf("request for %s from %s: %v", email, ip, err)
		}
	}
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		for i := range accounts.PasswordResetLimit + 1 {
			request(email, fmt.Sprintf("127.0.2.%d", i+1))
		}
	}
	if n := h.AccountMail.Len(); n != 2*accounts.PasswordResetLimit {
		t.Fatalf("%d requests queued for two addresses, want %d", n, 2*accounts.PasswordResetLimit)
	}
	if len(h.Mailer.Sent) != 0 {
		t.Fatal("a request sent mail itself")
	}
	// Per IP hash: five addresses from one IP, then a sixth.
	for i := range accounts.PasswordResetLimit + 1 {
		request(fmt.Sprintf("guess%d@example.com", i), "127.0.3.9")
	}
	if n := h.AccountMail.Len(); n != 3*accounts.PasswordResetLimit {
		t.Fatalf("%d requests queued, want %d", n, 3*accounts.PasswordResetLimit)
	}
	for sendQueuedMail(t, h) > 0 {
	}
	if len(h.Mailer.Sent) != accounts.PasswordResetLimit {
		t.Fatalf("%d mails sent, want %d (to the one address with an account)", len(h.Mailer.Sent), accounts.PasswordResetLimit)
	}
	// An hour after the first, the address may ask again.
	h.Advance(accounts.PasswordResetWindow)
	request("ada@example.com", "127.0.2.1")
	if n := h.AccountMail.Len(); n != 1 {
		t.Fatalf("an hour later: %d requests queued, want 1", n)
	}
}

// Twenty requests for one address at once: exactly five are queued.
func TestPasswordResetBurstIsLimitedExactly(t *testing.T) {
	h := newAccountsHarness(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			err := h.App.Commands.RequestPasswordReset.Handle(context.Background(),
				accounts.RequestPasswordReset{Email: "ada@example.com", IP: fmt.Sprintf("127.0.2.%d", i+1)})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := h.AccountMail.Len(); n != accounts.PasswordResetLimit {
		t.Fatalf("%d of 20 requests sent at once were queued, want %d", n, accounts.PasswordResetLimit)
	}
}

// A refused send is retried on the schedule; its link is spent at once, so only a link that
// went out works; after the schedule's last attempt the mail is given up.
func TestPasswordLinkMailIsRetried(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	ctx := context.Background()
	obs := &mailFailures{}

	h.Mailer.Refuse = 1
	if err := h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := h.App.AccountMail.SendDue(ctx, obs); n != 1 || len(h.Mailer.Sent) != 0 || len(obs.failures) != 1 {
		t.Fatalf("first attempt: claimed %d, sent %d, failures %v", n, len(h.Mailer.Sent), obs.failures)
	}
	if len(h.Tokens.Items) != 0 {
		t.Fatal("the link of a mail that was not sent is still usable")
	}
	if n, _ := h.App.AccountMail.SendDue(ctx, obs); n != 0 {
		t.Fatal("retried before its wait")
	}
	first, _ := retry.Default().After(1)
	h.Advance(first)
	if n := sendQueuedMail(t, h); n != 1 || len(h.Mailer.Sent) != 1 || h.AccountMail.Len() != 0 {
		t.Fatalf("second attempt: claimed %d, sent %d, %d left", n, len(h.Mailer.Sent), h.AccountMail.Len())
	}
	m := regexp.MustCompile(`token=(\S+)`).FindStringSubmatch(h.Mailer.Sent[0].Text)
	token, _ := url.QueryUnescape(m[1])
	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: token, Password: "a brand new passphrase"}); err != nil {
		t.Fatalf("the mailed link: %v", err)
	}

	// A relay that never takes it: five attempts, then given up.
	h.Mailer.Refuse = 100
	obs = &mailFailures{}
	h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: "ada@example.com"})
	for i := 1; h.AccountMail.Len() > 0; i++ {
		if i > retry.Default().MaxAttempts() {
			t.Fatalf("still queued after %d attempts", i-1)
		}
		if n, _ := h.App.AccountMail.SendDue(ctx, obs); n != 1 {
			t.Fatalf("attempt %d claimed %d", i, n)
		}
		wait, _ := retry.Default().After(i)
		h.Advance(wait)
	}
	if len(obs.failures) != retry.Default().MaxAttempts() || !regexp.MustCompile(`gave up true`).MatchString(obs.failures[len(obs.failures)-1]) {
		t.Fatalf("failures: %v", obs.failures)
	}
	if len(h.Tokens.Items) != 0 {
		t.Fatal("links of unsent mail are usable")
	}
}
