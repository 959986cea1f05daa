package member_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/member"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestParseRole(t *testing.T) {
	for _, s := range []string{"owner", "admin", "editor", "viewer"} {
		r, err := member.ParseRole(s)
		if err != nil || string(r) != s {
			t.Fatalf("ParseRole(%q) = %q, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "Owner", "root", "read-only"} {
		_, err := member.ParseRole(s)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Violations[0].Field != "role" {
			t.Fatalf("ParseRole(%q) = %v, want a role violation", s, err)
		}
	}
}

func TestRolePermissions(t *testing.T) {
	perms := []access.Permission{access.Read, access.Write, access.ManageAccount, access.ManageOwners}
	want := map[member.Role][]bool{
		member.RoleViewer: {true, false, false, false},
		member.RoleEditor: {true, true, false, false},
		member.RoleAdmin:  {true, true, true, false},
		member.RoleOwner:  {true, true, true, true},
		member.Role(""):   {false, false, false, false},
		member.Role("x"):  {false, false, false, false},
	}
	for role, allowed := range want {
		for i, p := range perms {
			if got := role.Allows(p); got != allowed[i] {
				t.Errorf("%q.Allows(%s) = %v, want %v", role, p, got, allowed[i])
			}
		}
		if role.Allows(access.Permission("delete-everything")) {
			t.Errorf("%q allows an unknown permission", role)
		}
	}
}

func TestNew(t *testing.T) {
	m, err := member.New("mem_1", "ws_1", "usr_1", member.RoleEditor, t0.In(time.FixedZone("X", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID() != "mem_1" || m.WorkspaceID() != "ws_1" || m.UserID() != "usr_1" || m.Role() != member.RoleEditor ||
		!m.CreatedAt().Equal(t0) || m.CreatedAt().Location() != time.UTC {
		t.Fatalf("membership = %+v", m)
	}
	if _, err := member.New("mem_1", "ws_1", "usr_1", member.Role("boss"), t0); err == nil {
		t.Fatal("unknown role accepted")
	}
	if _, err := member.New("mem_1", "", "usr_1", member.RoleViewer, t0); err == nil {
		t.Fatal("membership without workspace accepted")
	}
	if _, err := member.New("mem_1", "ws_1", "", member.RoleViewer, t0); err == nil {
		t.Fatal("membership without user accepted")
	}
}

func TestChangeRole(t *testing.T) {
	tests := []struct {
		name   string
		from   member.Role
		to     member.Role
		actor  access.Grant
		owners int
		want   error
	}{
		{"admin promotes editor to admin", member.RoleEditor, member.RoleAdmin, member.RoleAdmin, 1, nil},
		{"admin demotes admin to viewer", member.RoleAdmin, member.RoleViewer, member.RoleAdmin, 1, nil},
		{"admin may not grant owner", member.RoleAdmin, member.RoleOwner, member.RoleAdmin, 1, member.ErrOwnersOnly},
		{"admin may not demote an owner", member.RoleOwner, member.RoleAdmin, member.RoleAdmin, 3, member.ErrOwnersOnly},
		{"owner grants owner", member.RoleViewer, member.RoleOwner, member.RoleOwner, 1, nil},
		{"owner demotes one of two owners", member.RoleOwner, member.RoleAdmin, member.RoleOwner, 2, nil},
		{"the last owner stays owner", member.RoleOwner, member.RoleEditor, member.RoleOwner, 1, member.ErrLastOwner},
		{"no owner counted is not enough either", member.RoleOwner, member.RoleViewer, member.RoleOwner, 0, member.ErrLastOwner},
		{"owner to owner is no change", member.RoleOwner, member.RoleOwner, member.RoleOwner, 1, nil},
		{"unknown role", member.RoleEditor, member.Role("god"), member.RoleOwner, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := member.UnmarshalFromDatabase("mem_1", "ws_1", "usr_1", tt.from, t0)
			err := m.ChangeRole(tt.to, tt.actor, tt.owners)
			if tt.to == member.Role("god") {
				var ve *domain.ValidationError
				if !errors.As(err, &ve) || m.Role() != tt.from {
					t.Fatalf("ChangeRole(unknown) = %v, role %s", err, m.Role())
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("ChangeRole = %v, want %v", err, tt.want)
			}
			wantRole := tt.to
			if tt.want != nil {
				wantRole = tt.from
			}
			if m.Role() != wantRole {
				t.Fatalf("role = %s, want %s", m.Role(), wantRole)
			}
		})
	}
	if !errors.Is(member.ErrLastOwner, domain.ErrConflict) {
		t.Fatal("ErrLastOwner is not a conflict")
	}
}

func TestCheckRemoval(t *testing.T) {
	tests := []struct {
		name   string
		role   member.Role
		actor  access.Grant
		owners int
		want   error
	}{
		{"admin removes an editor", member.RoleEditor, member.RoleAdmin, 1, nil},
		{"admin removes an admin", member.RoleAdmin, member.RoleAdmin, 1, nil},
		{"admin may not remove an owner", member.RoleOwner, member.RoleAdmin, 2, member.ErrOwnersOnly},
		{"owner removes one of two owners", member.RoleOwner, member.RoleOwner, 2, nil},
		{"owner may not remove the last owner", member.RoleOwner, member.RoleOwner, 1, member.ErrLastOwner},
		{"owner removes a viewer of a workspace with one owner", member.RoleViewer, member.RoleOwner, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := member.UnmarshalFromDatabase("mem_1", "ws_1", "usr_1", tt.role, t0)
			err := m.CheckRemoval(tt.actor, tt.owners)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckRemoval = %v, want %v", err, tt.want)
			}
		})
	}
}
