package httperr_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

func TestProblem(t *testing.T) {
	cases := []struct {
		err        error
		status     int
		code       string
		retryAfter string
	}{
		{fmt.Errorf("insert: %w", domain.ErrUnavailable), 503, "unavailable", "5"},
		{fmt.Errorf("capture: %w", domain.ErrFormClosed), 409, "form_closed", ""},
		{domain.ErrNotFound, 404, "not_found", ""},
		{domain.Validation("fld_a", "required", "A: a value is required"), 422, "validation_failed", ""},
		{&spam.RateLimited{RetryAfter: 1500 * time.Millisecond}, 429, "rate_limited", "2"},
		{&spam.Rejection{Reason: spam.ReasonTooFast}, 403, "rejected", ""},
		{&http.MaxBytesError{Limit: 32 << 20}, 413, "payload_too_large", ""},
		{httperr.BadRequest("bad cursor"), 400, "invalid_request", ""},
		{fmt.Errorf("boom"), 500, "internal_error", ""},
		{&accounts.ThrottledError{RetryAfter: 90 * time.Second}, 429, "rate_limited", "90"},
		{accounts.ErrInvalidTwoFactorCode, 401, "unauthorized", ""},
		{fmt.Errorf("%w: owner", member.ErrOwnersOnly), 403, "forbidden", ""},
		{invitation.ErrNotUsable, 404, "not_found", ""},
		{accounts.ErrSetupClosed, 404, "not_found", ""},
		{accounts.ErrSignInToAccept, 409, "conflict", ""},
		{fmt.Errorf("change role: %w", member.ErrLastOwner), 409, "conflict", ""},
		{fmt.Errorf("%w: viewer needs write", auth.ErrForbidden), 403, "forbidden", ""},
	}
	gin.SetMode(gin.ReleaseMode)
	for _, c := range cases {
		b := httperr.Problem(c.err)
		if b.Status != c.status || b.Code != c.code {
			t.Errorf("%v: %d %s, want %d %s", c.err, b.Status, b.Code, c.status, c.code)
		}
		rec := httptest.NewRecorder()
		ctx, _ := gin.CreateTestContext(rec)
		httperr.Write(ctx, b)
		if rec.Code != c.status || rec.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("%v: wrote %d Retry-After %q", c.err, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
}

// Every conflict says what clashed; only a reused Idempotency-Key says the key was used.
func TestConflictMessages(t *testing.T) {
	for _, c := range []struct {
		err     error
		message string
	}{
		{fmt.Errorf("begin: %w", accounts.ErrTwoFactorOn), "two-step verification is already on; turn it off first to set it up again"},
		{accounts.ErrTwoFactorOff, "two-step verification is not on"},
		{fmt.Errorf("accept invitation: create invited user: %w", user.ErrEmailTaken), "an account with this email address already exists"},
		{user.ErrIdentityTaken, "this single sign-on identity is linked to another account"},
		{fmt.Errorf("change role: %w", member.ErrLastOwner), "a workspace keeps at least one owner: make another member owner first"},
		{accounts.ErrAlreadyMember, "this person is already a member of the workspace"},
		{accounts.ErrSignInToAccept, "an account with this email exists: sign in to accept the invitation"},
		{fmt.Errorf("retry run: %w", workflow.ErrRunNotFailed), "only a failed run can be retried"},
		{ports.ErrIdempotencyKeyReused, "this Idempotency-Key was already used with another request, or that request is still running"},
		{ports.ErrIdempotentSubmissionDeleted, "the submission this key created has been deleted"},
		{domain.Conflict("the fields changed in the meantime"), "the fields changed in the meantime"},
		{fmt.Errorf("create form: %w", domain.ErrConflict), "this clashes with a change made in the meantime; reload and try again"},
	} {
		b := httperr.Problem(c.err)
		if b.Status != 409 || b.Code != "conflict" || b.Message != c.message {
			t.Errorf("%v: %d %s %q, want 409 conflict %q", c.err, b.Status, b.Code, b.Message, c.message)
		}
	}
}
