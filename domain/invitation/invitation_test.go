package invitation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestNew(t *testing.T) {
	h := invitation.HashToken("secret-token")
	inv, err := invitation.New("inv_1", "ws_1", " Bob@Example.com ", member.RoleEditor, h, "usr_1", t0.In(time.FixedZone("X", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	if inv.ID() != "inv_1" || inv.WorkspaceID() != "ws_1" || inv.Email() != "bob@example.com" || inv.Role() != member.RoleEditor ||
		inv.InvitedBy() != "usr_1" || !inv.CreatedAt().Equal(t0) || inv.CreatedAt().Location() != time.UTC ||
		!inv.ExpiresAt().Equal(t0.Add(7*24*time.Hour)) || inv.AcceptedAt() != nil {
		t.Fatalf("invitation = %+v", inv)
	}
	if !inv.Matches("secret-token") || inv.Matches("secret-token2") || inv.Matches("") {
		t.Fatal("Matches is wrong")
	}

	_, err = invitation.New("inv_2", "ws_1", "not-an-email", member.Role("boss"), []byte("short"), "usr_1", t0)
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 3 {
		t.Fatalf("New with everything wrong = %v", err)
	}
	fields := map[string]bool{}
	for _, v := range ve.Violations {
		fields[v.Field] = true
	}
	if !fields["email"] || !fields["role"] || !fields["token"] {
		t.Fatalf("violations = %+v", ve.Violations)
	}
}

func TestAccept(t *testing.T) {
	inv, err := invitation.New("inv_1", "ws_1", "bob@example.com", member.RoleViewer, invitation.HashToken("tok"), "usr_1", t0)
	if err != nil {
		t.Fatal(err)
	}
	last := t0.Add(invitation.Validity - time.Millisecond)
	if !inv.Usable(t0) || !inv.Usable(last) {
		t.Fatal("a fresh invitation is not usable")
	}
	if inv.Usable(t0.Add(invitation.Validity)) {
		t.Fatal("usable at its expiry")
	}
	if err := inv.Accept(t0.Add(invitation.Validity)); !errors.Is(err, invitation.ErrNotUsable) || inv.AcceptedAt() != nil {
		t.Fatalf("Accept after expiry = %v", err)
	}
	if err := inv.Accept(last.In(time.FixedZone("X", 3600))); err != nil {
		t.Fatalf("Accept = %v", err)
	}
	if inv.AcceptedAt() == nil || !inv.AcceptedAt().Equal(last) || inv.AcceptedAt().Location() != time.UTC {
		t.Fatalf("accepted at %v", inv.AcceptedAt())
	}
	if inv.Usable(t0) {
		t.Fatal("an accepted invitation is still usable")
	}
	if err := inv.Accept(t0); !errors.Is(err, invitation.ErrNotUsable) || !inv.AcceptedAt().Equal(last) {
		t.Fatalf("second Accept = %v, accepted at %v", err, inv.AcceptedAt())
	}

	accepted := t0.Add(time.Hour)
	stored := invitation.UnmarshalFromDatabase("inv_2", "ws_1", "c@example.com", member.RoleAdmin, invitation.HashToken("t2"), "usr_1",
		t0, t0.Add(invitation.Validity), &accepted)
	if stored.Usable(t0) || !errors.Is(stored.Accept(t0), invitation.ErrNotUsable) {
		t.Fatal("a stored accepted invitation can be accepted")
	}
}
