package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// TestConflictsSayWhatConflicted: a conflict's page says what clashed, in the words the error
// table gives the API: two-step verification already on, the workspace's last owner.
func TestConflictsSayWhatConflicted(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	setup := owner.postFollow("/app/settings/profile/two-factor", url.Values{})
	secret := regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`).FindStringSubmatch(setup.body)
	if secret == nil {
		t.Fatalf("no secret on the setup page: %s", text(setup.body))
	}
	code, err := totp.GenerateCode(secret[1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	owner.postFollow("/app/settings/profile/two-factor/confirm", url.Values{"code": {code}})
	again := text(owner.post("/app/settings/profile/two-factor", url.Values{}).expect(t, http.StatusConflict).body)
	if !strings.Contains(again, "Two-step verification is already on; turn it off first to set it up again.") || strings.Contains(again, "Idempotency") {
		t.Errorf("setting two-step verification up again: %s", again)
	}

	members := owner.get("/app/settings/members").expect(t, http.StatusOK)
	ownerID := regexp.MustCompile(`/app/settings/members/(mem_[A-Za-z0-9_\-]+)/role`).FindStringSubmatch(members.body)
	if ownerID == nil {
		t.Fatalf("no role control: %s", text(members.body))
	}
	refused := text(owner.post("/app/settings/members/"+ownerID[1]+"/role", url.Values{"role": {"admin"}}).expect(t, http.StatusConflict).body)
	if !strings.Contains(refused, "A workspace keeps at least one owner: make another member owner first.") {
		t.Errorf("last owner refusal: %s", refused)
	}
}
