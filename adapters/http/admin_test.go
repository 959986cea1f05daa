package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

var personSeq atomic.Int64

// addPerson makes a user with a membership of workspace A (as the CLI does) and returns the
// membership's ID as GET /members shows it.
func (h *harness) addPerson(role string) (email, membershipID string) {
	h.t.Helper()
	email = fmt.Sprintf("person%d@example.com", personSeq.Add(1))
	if _, err := h.app.Commands.CreateUser.Handle(context.Background(), accounts.CreateUser{Email: email, Name: "P", WorkspaceID: h.wsA, Role: role}); err != nil {
		h.t.Fatal(err)
	}
	return email, h.memberID(email)
}

// memberID finds a person's membership of workspace A through the API.
func (h *harness) memberID(email string) string {
	h.t.Helper()
	cursor := ""
	for {
		r := h.do("GET", "/v1/members?limit=100"+cursor, h.keys["admin"], nil)
		h.expect(r, 200, "")
		for _, m := range r.json["data"].([]any) {
			m := m.(map[string]any)
			if m["user"].(map[string]any)["email"] == email {
				return m["id"].(string)
			}
		}
		next, _ := r.json["next_cursor"].(string)
		if next == "" {
			h.t.Fatalf("no member %s", email)
		}
		cursor = "&cursor=" + url.QueryEscape(next)
	}
}

// invite makes an invitation with the admin key and returns its JSON.
func (h *harness) invite(email, role string) map[string]any {
	h.t.Helper()
	r := h.do("POST", "/v1/invitations", h.keys["admin"], map[string]any{"email": email, "role": role})
	h.expect(r, 201, "")
	return r.json
}

// auditEvents lists workspace A's audit events, newest first, with the filter.
func (h *harness) auditEvents(query string) []map[string]any {
	h.t.Helper()
	r := h.do("GET", "/v1/audit-events?limit=100"+query, h.keys["admin"], nil)
	h.expect(r, 200, "")
	var out []map[string]any
	for _, e := range r.json["data"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// TestAdminAuthMatrix runs every account endpoint with every kind of key: only an admin key of
// the workspace succeeds; read-write and read-only keys get 403 (reads included), missing and
// revoked keys 401, and an admin key of another workspace 404 for this workspace's IDs.
func TestAdminAuthMatrix(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		_, editor := h.addPerson("editor")
		freshKey := func() string {
			r := h.do("POST", "/v1/api-keys", h.keys["admin"], map[string]any{"name": "doomed", "scope": "read-only"})
			h.expect(r, 201, "")
			return r.json["id"].(string)
		}
		freshMember := func() string { _, id := h.addPerson("viewer"); return id }
		freshInvitation := func() string { return h.invite("fresh@example.com", "viewer")["id"].(string) }
		type endpoint struct {
			method, path string
			body         any
			fresh        func() string // makes the resource a DELETE removes
			ok           int
		}
		for _, e := range []endpoint{
			{"GET", "/v1/workspace", nil, nil, 200},
			{"PATCH", "/v1/workspace", map[string]any{"billing_email": "billing@example.com"}, nil, 200},
			{"GET", "/v1/api-keys", nil, nil, 200},
			{"POST", "/v1/api-keys", map[string]any{"name": "CI", "scope": "read-write"}, nil, 201},
			{"DELETE", "/v1/api-keys/", nil, freshKey, 204},
			{"GET", "/v1/members", nil, nil, 200},
			{"PATCH", "/v1/members/" + editor, map[string]any{"role": "viewer"}, nil, 200},
			{"DELETE", "/v1/members/", nil, freshMember, 204},
			{"GET", "/v1/invitations", nil, nil, 200},
			{"POST", "/v1/invitations", map[string]any{"email": "new@example.com", "role": "editor"}, nil, 201},
			{"DELETE", "/v1/invitations/", nil, freshInvitation, 204},
			{"GET", "/v1/audit-events", nil, nil, 200},
		} {
			t.Run(e.method+" "+e.path, func(t *testing.T) {
				h.t = t
				path := e.path
				if e.fresh != nil {
					path += e.fresh()
				}
				h.expect(h.do(e.method, path, "", e.body), 401, "unauthorized")
				h.expect(h.do(e.method, path, h.keys["revoked"], e.body), 401, "unauthorized")
				h.expect(h.do(e.method, path, h.keys["read-write"], e.body), 403, "forbidden")
				h.expect(h.do(e.method, path, h.keys["read-only"], e.body), 403, "forbidden")
				other := h.do(e.method, path, h.keys["other"], e.body)
				switch {
				case strings.Count(path, "/") > 2 || e.method == "PATCH" && strings.HasPrefix(path, "/v1/members/"):
					// An ID of this workspace names nothing in the other one.
					h.expect(other, 404, "not_found")
				case path == "/v1/workspace":
					h.expect(other, e.ok, "")
					if other.json["id"] != h.wsB {
						t.Fatalf("the other key sees workspace %v", other.json["id"])
					}
				case e.method == "GET":
					h.expect(other, 200, "")
					for _, item := range other.json["data"].([]any) {
						if strings.Contains(fmt.Sprint(item), h.keyIDs["admin"]) || strings.Contains(fmt.Sprint(item), editor) {
							t.Fatalf("workspace B sees workspace A's %v", item)
						}
					}
				}
				if e.fresh != nil {
					path = e.path + e.fresh()
				}
				h.expect(h.do(e.method, path, h.keys["admin"], e.body), e.ok, "")
				if e.fresh != nil {
					// Gone: a second DELETE names nothing.
					h.expect(h.do(e.method, path, h.keys["admin"], e.body), 404, "not_found")
				}
			})
		}
		h.t = t
		// Malformed and unknown IDs are 404 too.
		for _, p := range []string{"/v1/api-keys/key_unknown00000000000", "/v1/members/mem_unknown0000000000000", "/v1/invitations/inv%00x"} {
			h.expect(h.do("DELETE", p, h.keys["admin"], nil), 404, "not_found")
		}
	})
}

func TestWorkspaceSettings(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		h.createForm(contactFields...)
		h.addPerson("owner")
		r := h.do("GET", "/v1/workspace", h.keys["admin"], nil)
		h.expect(r, 200, "")
		if r.json["id"] != h.wsA || r.json["name"] != "A" || r.json["plan"] != "business" || r.json["status"] != "active" ||
			r.json["billing_email"] != nil || r.json["cancelled_at"] != nil || r.json["data_deletion_at"] != nil {
			t.Fatalf("workspace %v", r.json)
		}
		usage := r.json["usage"].(map[string]any)
		if usage["forms"] != 1.0 || usage["members"] != 1.0 || usage["submissions"] != 0.0 {
			t.Fatalf("usage %v", usage)
		}

		// A downgrade keeps the old plan's data for 90 days; the change is audited with its fields.
		before := time.Now().UTC()
		r = h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"plan": "free", "billing_email": "Billing@Example.com", "name": " Acme ", "id": "ignored"})
		h.expect(r, 200, "")
		if r.json["plan"] != "free" || r.json["billing_email"] != "billing@example.com" || r.json["name"] != "Acme" || r.json["data_deletion_at"] == nil {
			t.Fatalf("after downgrade %v", r.json)
		}
		del, _ := time.Parse(time.RFC3339, r.json["data_deletion_at"].(string))
		if d := del.Sub(before); d < 89*24*time.Hour || d > 91*24*time.Hour {
			t.Fatalf("data deletion in %v", d)
		}
		events := h.auditEvents("&action=workspace.updated")
		if len(events) != 1 {
			t.Fatalf("%d workspace.updated events", len(events))
		}
		details := events[0]["details"].(map[string]any)
		if details["plan"] != "free" || details["billing_email"] != "billing@example.com" || details["name"] != "Acme" || len(details) != 3 {
			t.Fatalf("details %v", details)
		}
		actor := events[0]["actor"].(map[string]any)
		if actor["type"] != "api_key" || actor["id"] != h.keyIDs["admin"] || actor["name"] != "admin" {
			t.Fatalf("actor %v", actor)
		}
		if target := events[0]["target"].(map[string]any); target["type"] != "workspace" || target["id"] != h.wsA {
			t.Fatalf("target %v", target)
		}

		// Cancelling, then back; a change that changes nothing is not audited.
		r = h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"status": "cancelled"})
		h.expect(r, 200, "")
		if r.json["status"] != "cancelled" || r.json["cancelled_at"] == nil {
			t.Fatalf("cancelled %v", r.json)
		}
		r = h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"status": "active", "plan": "business", "billing_email": nil})
		h.expect(r, 200, "")
		if r.json["cancelled_at"] != nil || r.json["data_deletion_at"] != nil || r.json["billing_email"] != nil {
			t.Fatalf("reactivated %v", r.json)
		}
		h.expect(h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"plan": "business"}), 200, "")
		if n := len(h.auditEvents("&action=workspace.updated")); n != 3 {
			t.Fatalf("%d workspace.updated events, want 3", n)
		}

		for _, bad := range []map[string]any{{"plan": "gold"}, {"status": "paused"}, {"billing_email": "nope"}, {"name": ""}, {"owner": "x"}, {"plan": 3}} {
			h.expect(h.do("PATCH", "/v1/workspace", h.keys["admin"], bad), 422, "validation_failed")
		}
		h.expect(h.do("PATCH", "/v1/workspace", h.keys["admin"], "[]"), 400, "invalid_request")
	})
}

func TestAPIKeys(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		r := h.do("POST", "/v1/api-keys", h.keys["admin"], map[string]any{"name": " Zapier ", "scope": "read-only", "prefix": "ignored"})
		h.expect(r, 201, "")
		full, id := r.json["key"].(string), r.json["id"].(string)
		if !strings.HasPrefix(full, r.json["prefix"].(string)) || r.json["name"] != "Zapier" || r.json["scope"] != "read-only" || r.json["last_used_at"] != nil {
			t.Fatalf("created %v", r.json)
		}
		by := r.json["created_by"].(map[string]any)
		if by["type"] != "api_key" || by["id"] != h.keyIDs["admin"] || by["name"] != "admin" {
			t.Fatalf("created_by %v", by)
		}
		// The new key works at once, within its scope, and its use is recorded.
		h.expect(h.do("GET", "/v1/forms", full, nil), 200, "")
		h.expect(h.do("POST", "/v1/forms", full, map[string]any{"name": "x"}), 403, "forbidden")
		list := h.do("GET", "/v1/api-keys?limit=100", h.keys["admin"], nil)
		h.expect(list, 200, "")
		var listed map[string]any
		for _, k := range list.json["data"].([]any) {
			k := k.(map[string]any)
			if _, shown := k["key"]; shown {
				t.Fatalf("a listed key shows its secret: %v", k)
			}
			if k["id"] == h.keyIDs["revoked"] {
				t.Fatal("a revoked key is listed")
			}
			if k["id"] == id {
				listed = k
			}
		}
		if listed == nil || listed["last_used_at"] == nil {
			t.Fatalf("new key listed as %v", listed)
		}
		if first := list.json["data"].([]any)[0].(map[string]any); first["id"] != id {
			t.Fatalf("newest first: %v", first["id"])
		}
		// Pages follow one another without repeats.
		seen := map[string]bool{}
		cursor := ""
		for {
			p := h.do("GET", "/v1/api-keys?limit=1"+cursor, h.keys["admin"], nil)
			h.expect(p, 200, "")
			for _, k := range p.json["data"].([]any) {
				kid := k.(map[string]any)["id"].(string)
				if seen[kid] {
					t.Fatalf("key %s twice", kid)
				}
				seen[kid] = true
			}
			if p.json["has_more"] != true {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(p.json["next_cursor"].(string))
		}
		if len(seen) != len(list.json["data"].([]any)) {
			t.Fatalf("paged through %d keys, listed %d", len(seen), len(list.json["data"].([]any)))
		}

		for _, bad := range []map[string]any{{"name": strings.Repeat("n", 101), "scope": "admin"}, {"name": "x"}, {"scope": "admin"}, {"name": "x", "scope": "root"}, {"name": " ", "scope": "admin"}} {
			h.expect(h.do("POST", "/v1/api-keys", h.keys["admin"], bad), 422, "validation_failed")
		}

		h.expect(h.do("DELETE", "/v1/api-keys/"+id, h.keys["admin"], nil), 204, "")
		h.expect(h.do("GET", "/v1/forms", full, nil), 401, "unauthorized")
		h.expect(h.do("DELETE", "/v1/api-keys/"+id, h.keys["admin"], nil), 404, "not_found")
		// Another workspace's admin cannot revoke this workspace's keys.
		h.expect(h.do("DELETE", "/v1/api-keys/"+h.keyIDs["read-only"], h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms", h.keys["read-only"], nil), 200, "")

		// The harness's four keys of workspace A were made, and one revoked, by the system (the
		// CLI's principal).
		created := h.auditEvents("&action=api_key.created")
		revoked := h.auditEvents("&action=api_key.revoked")
		if len(created) != 4+1 || len(revoked) != 1+1 {
			t.Fatalf("%d api_key.created, %d api_key.revoked events", len(created), len(revoked))
		}
		if a := created[1]["actor"].(map[string]any); a["type"] != "system" || created[1]["target"].(map[string]any)["type"] != "api_key" {
			t.Fatalf("a key made by the system: %v", created[1])
		}
		for _, e := range []map[string]any{created[0], revoked[0]} {
			if e["target"].(map[string]any)["id"] != id || e["actor"].(map[string]any)["id"] != h.keyIDs["admin"] {
				t.Fatalf("event %v", e)
			}
			if strings.Contains(fmt.Sprint(e), strings.SplitN(full, ".", 2)[1]) {
				t.Fatal("an audit event holds the key's secret")
			}
		}
	})
}

// A key revoked through one server process is refused by another on its very next request:
// every process reads the key on every request.
func TestRevocationReachesEveryProcess(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		one := newHarness(t, db, httpapi.Options{})
		two := newHarness(t, db, httpapi.Options{})
		r := one.do("POST", "/v1/api-keys", one.keys["admin"], map[string]any{"name": "shared", "scope": "read-write"})
		one.expect(r, 201, "")
		key := r.json["key"].(string)
		two.expect(two.do("GET", "/v1/forms", key, nil), 200, "")
		two.expect(two.do("GET", "/v1/forms", key, nil), 200, "")
		one.expect(one.do("DELETE", "/v1/api-keys/"+r.json["id"].(string), one.keys["admin"], nil), 204, "")
		two.expect(two.do("GET", "/v1/forms", key, nil), 401, "unauthorized")
		one.expect(one.do("GET", "/v1/forms", key, nil), 401, "unauthorized")
	})
}

func TestMembers(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		ownerEmail, owner := h.addPerson("owner")
		_, editor := h.addPerson("editor")

		r := h.do("GET", "/v1/members", h.keys["admin"], nil)
		h.expect(r, 200, "")
		if n := len(r.json["data"].([]any)); n != 2 {
			t.Fatalf("%d members", n)
		}
		r = h.do("PATCH", "/v1/members/"+editor, h.keys["admin"], map[string]any{"role": "admin", "id": editor, "created_at": "x"})
		h.expect(r, 200, "")
		if r.json["role"] != "admin" || r.json["id"] != editor {
			t.Fatalf("changed %v", r.json)
		}
		h.expect(h.do("PATCH", "/v1/members/"+editor, h.keys["admin"], map[string]any{"role": "boss"}), 422, "validation_failed")
		h.expect(h.do("PATCH", "/v1/members/"+editor, h.keys["admin"], map[string]any{}), 422, "validation_failed")

		// The last owner keeps the role and the membership, whoever asks.
		h.expect(h.do("PATCH", "/v1/members/"+owner, h.keys["admin"], map[string]any{"role": "admin"}), 409, "conflict")
		h.expect(h.do("DELETE", "/v1/members/"+owner, h.keys["admin"], nil), 409, "conflict")
		ownerPrincipal := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: h.wsA, Role: member.RoleOwner,
			Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_owner", Name: ownerEmail}})
		if _, err := h.app.Commands.ChangeMemberRole.Handle(ownerPrincipal, accounts.ChangeMemberRole{ID: owner, Role: "editor"}); !errors.Is(err, member.ErrLastOwner) {
			t.Fatalf("owner demoting the last owner: %v", err)
		}
		// Only an owner grants the owner role: an admin key may not, an owner may; with two
		// owners, an admin key still may not take it.
		h.expect(h.do("PATCH", "/v1/members/"+editor, h.keys["admin"], map[string]any{"role": "owner"}), 403, "forbidden")
		if _, err := h.app.Commands.ChangeMemberRole.Handle(ownerPrincipal, accounts.ChangeMemberRole{ID: editor, Role: "owner"}); err != nil {
			t.Fatal(err)
		}
		h.expect(h.do("PATCH", "/v1/members/"+owner, h.keys["admin"], map[string]any{"role": "viewer"}), 403, "forbidden")
		h.expect(h.do("DELETE", "/v1/members/"+owner, h.keys["admin"], nil), 403, "forbidden")
		if err := h.app.Commands.RemoveMember.Handle(ownerPrincipal, accounts.RemoveMember{ID: owner}); err != nil {
			t.Fatalf("an owner removes one of two owners: %v", err)
		}
		if err := h.app.Commands.RemoveMember.Handle(ownerPrincipal, accounts.RemoveMember{ID: editor}); !errors.Is(err, member.ErrLastOwner) {
			t.Fatalf("removing the last owner: %v", err)
		}
		_, viewer := h.addPerson("viewer")
		h.expect(h.do("DELETE", "/v1/members/"+viewer, h.keys["admin"], nil), 204, "")
		h.expect(h.do("DELETE", "/v1/members/"+viewer, h.keys["admin"], nil), 404, "not_found")

		// Pages of one cover every member once.
		h.addPerson("viewer")
		h.addPerson("editor")
		seen := map[string]bool{}
		cursor := ""
		for {
			p := h.do("GET", "/v1/members?limit=1"+cursor, h.keys["admin"], nil)
			h.expect(p, 200, "")
			for _, m := range p.json["data"].([]any) {
				id := m.(map[string]any)["id"].(string)
				if seen[id] {
					t.Fatalf("member %s twice", id)
				}
				seen[id] = true
			}
			if p.json["has_more"] != true {
				break
			}
			cursor = "&cursor=" + url.QueryEscape(p.json["next_cursor"].(string))
		}
		if len(seen) != 3 {
			t.Fatalf("paged through %d members, want 3", len(seen))
		}

		changed := h.auditEvents("&action=member.role_changed")
		removed := h.auditEvents("&action=member.removed")
		if len(changed) != 2 || len(removed) != 2 {
			t.Fatalf("%d member.role_changed, %d member.removed events", len(changed), len(removed))
		}
		if d := changed[1]["details"].(map[string]any); d["from"] != "editor" || d["to"] != "admin" || changed[1]["target"].(map[string]any)["id"] != editor {
			t.Fatalf("first role change %v", changed[1])
		}
		if a := changed[0]["actor"].(map[string]any); a["type"] != "user" || a["id"] != "usr_owner" {
			t.Fatalf("owner's role change by %v", a)
		}
	})
}

// sentMail records account mail instead of sending it.
type sentMail struct {
	mu   sync.Mutex
	sent []ports.Mail
}

func (m *sentMail) Send(_ context.Context, mail ports.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, mail)
	return nil
}

func TestInvitations(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		mail := &sentMail{}
		h := newHarness(t, db, httpapi.Options{}, func(d *application.Deps) { d.Mailer = mail })
		inv := h.invite(" Grace@Example.com ", "editor")
		link := inv["accept_url"].(string)
		// With mail configured, the person gets the link too.
		if len(mail.sent) != 1 || mail.sent[0].To != "grace@example.com" || !strings.Contains(mail.sent[0].Text, link) ||
			!strings.Contains(mail.sent[0].Subject, "A") {
			t.Fatalf("mail %+v", mail.sent)
		}
		token, ok := strings.CutPrefix(link, testPublicURL+"/app/invitations/")
		if !ok || len(token) < 43 || inv["email"] != "grace@example.com" || inv["role"] != "editor" {
			t.Fatalf("invitation %v", inv)
		}
		exp, _ := time.Parse(time.RFC3339, inv["expires_at"].(string))
		cre, _ := time.Parse(time.RFC3339, inv["created_at"].(string))
		if exp.Sub(cre) != invitation.Validity {
			t.Fatalf("valid for %v", exp.Sub(cre))
		}
		list := h.do("GET", "/v1/invitations", h.keys["admin"], nil)
		h.expect(list, 200, "")
		if items := list.json["data"].([]any); len(items) != 1 || items[0].(map[string]any)["accept_url"] != nil {
			t.Fatalf("listed %v", items)
		}
		for _, bad := range []map[string]any{{"email": "nope", "role": "editor"}, {"email": "a@example.com", "role": "king"}, {"role": "editor"}, {"email": "a@example.com"}} {
			h.expect(h.do("POST", "/v1/invitations", h.keys["admin"], bad), 422, "validation_failed")
		}
		// Only an owner invites an owner.
		h.expect(h.do("POST", "/v1/invitations", h.keys["admin"], map[string]any{"email": "o@example.com", "role": "owner"}), 403, "forbidden")

		ctx := context.Background()
		view, err := h.app.Queries.GetInvitation.Handle(ctx, accounts.GetInvitation{Token: token})
		if err != nil || view.WorkspaceName != "A" || view.UserExists || view.Invitation.ID() != inv["id"] {
			t.Fatalf("GetInvitation = %+v, %v", view, err)
		}
		if _, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: token, Name: "Grace", Password: "short"}); err == nil {
			t.Fatal("a short password was accepted")
		}
		in, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: token, Name: "Grace Hopper", Password: "cobol compilers 1959", IP: "192.0.2.7"})
		if err != nil || in.Token == "" || in.Session == nil || in.Session.WorkspaceID() != h.wsA || in.User.Email() != "grace@example.com" {
			t.Fatalf("AcceptInvitation = %+v, %v", in, err)
		}
		if _, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: token, Name: "Again", Password: "cobol compilers 1959"}); !errors.Is(err, invitation.ErrNotUsable) {
			t.Fatalf("second accept: %v", err)
		}
		if _, err := h.app.Queries.GetInvitation.Handle(ctx, accounts.GetInvitation{Token: token}); !errors.Is(err, invitation.ErrNotUsable) {
			t.Fatalf("spent invitation: %v", err)
		}
		h.memberID("grace@example.com")
		if n := len(h.do("GET", "/v1/invitations", h.keys["admin"], nil).json["data"].([]any)); n != 0 {
			t.Fatalf("%d pending after accepting", n)
		}
		// A member is not invited again; somebody with an account signs in to accept.
		h.expect(h.do("POST", "/v1/invitations", h.keys["admin"], map[string]any{"email": "grace@example.com", "role": "viewer"}), 409, "conflict")
		other := h.do("POST", "/v1/invitations", h.keys["other"], map[string]any{"email": "grace@example.com", "role": "viewer"})
		h.expect(other, 201, "")
		otherToken := other.json["accept_url"].(string)[len(testPublicURL+"/app/invitations/"):]
		if v, err := h.app.Queries.GetInvitation.Handle(ctx, accounts.GetInvitation{Token: otherToken}); err != nil || !v.UserExists || v.WorkspaceName != "B" {
			t.Fatalf("invitation for an existing user = %+v, %v", v, err)
		}
		if _, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: otherToken, Name: "x", Password: "another long password"}); !errors.Is(err, accounts.ErrSignInToAccept) {
			t.Fatalf("accepting for an existing account without signing in: %v", err)
		}
		if _, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: otherToken, SignedInUserID: "usr_somebodyelse0000000"}); !errors.Is(err, auth.ErrForbidden) {
			t.Fatalf("accepting as another account: %v", err)
		}
		joined, err := h.app.Commands.AcceptInvitation.Handle(ctx, accounts.AcceptInvitation{Token: otherToken, SignedInUserID: in.User.ID()})
		if err != nil || joined.Session.WorkspaceID() != h.wsB || joined.User.ID() != in.User.ID() {
			t.Fatalf("signed-in accept = %+v, %v", joined, err)
		}

		// Withdrawing: the link stops working.
		w := h.invite("late@example.com", "viewer")
		h.expect(h.do("DELETE", "/v1/invitations/"+w["id"].(string), h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("DELETE", "/v1/invitations/"+w["id"].(string), h.keys["admin"], nil), 204, "")
		wToken := w["accept_url"].(string)[len(testPublicURL+"/app/invitations/"):]
		if _, err := h.app.Queries.GetInvitation.Handle(ctx, accounts.GetInvitation{Token: wToken}); !errors.Is(err, invitation.ErrNotUsable) {
			t.Fatalf("withdrawn invitation: %v", err)
		}

		invited := h.auditEvents("&action=member.invited")
		withdrawn := h.auditEvents("&action=member.invitation_withdrawn")
		joinedEvents := h.auditEvents("&action=member.joined")
		if len(invited) != 2 || len(withdrawn) != 1 || len(joinedEvents) != 1 {
			t.Fatalf("%d invited, %d withdrawn, %d joined", len(invited), len(withdrawn), len(joinedEvents))
		}
		if a := joinedEvents[0]["actor"].(map[string]any); a["type"] != "user" || a["id"] != in.User.ID() || joinedEvents[0]["ip_hash"] == nil {
			t.Fatalf("joined %v", joinedEvents[0])
		}
		if strings.Contains(fmt.Sprint(invited), token) {
			t.Fatal("an audit event holds an accept token")
		}
	})
}

// Every account action, and creating and deleting forms and deleting submissions, leaves an audit
// event, filterable by action and time; bad filters are 400.
func TestAuditEvents(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		// The harness's own keys were made (by the system) before start, what follows after it.
		start := testkit.PastMillisecond(t, time.Now()).UTC()
		testkit.PastMillisecond(t, start)
		after := "&created_after=" + url.QueryEscape(start.Format(time.RFC3339Nano))
		f := h.createForm(contactFields...)
		fid := fieldIDs(f)[0]
		s := h.do("POST", "/v1/forms/"+f["id"].(string)+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{fid: "Ada Lovelace"}})
		h.expect(s, 201, "")
		// Events of one millisecond have no order between them: each step leaves its millisecond.
		testkit.PastMillisecond(t, time.Now())
		h.expect(h.do("DELETE", "/v1/forms/"+f["id"].(string)+"/submissions/"+s.json["id"].(string), h.keys["read-write"], nil), 204, "")
		testkit.PastMillisecond(t, time.Now())
		h.expect(h.do("DELETE", "/v1/forms/"+f["id"].(string), h.keys["admin"], nil), 204, "")
		testkit.PastMillisecond(t, time.Now())
		h.expect(h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"name": "Renamed"}), 200, "")

		all := h.auditEvents(after)
		if len(all) != 4 || all[0]["action"] != "workspace.updated" || all[1]["action"] != "form.deleted" || all[2]["action"] != "submission.deleted" ||
			all[3]["action"] != "form.created" {
			t.Fatalf("log %v", all)
		}
		sub := all[2]
		if sub["target"].(map[string]any)["id"] != s.json["id"] || sub["actor"].(map[string]any)["id"] != h.keyIDs["read-write"] ||
			strings.Contains(fmt.Sprint(sub), "Ada") {
			t.Fatalf("submission.deleted %v", sub)
		}
		if all[1]["target"].(map[string]any)["id"] != f["id"] || all[1]["actor"].(map[string]any)["id"] != h.keyIDs["admin"] {
			t.Fatalf("form.deleted %v", all[1])
		}
		if got := h.auditEvents("&action=form.deleted"); len(got) != 1 || got[0]["id"] != all[1]["id"] {
			t.Fatalf("filtered %v", got)
		}
		if got := h.auditEvents("&action=member.removed"); len(got) != 0 {
			t.Fatalf("filtered %v", got)
		}
		mid, _ := time.Parse(time.RFC3339, all[1]["created_at"].(string))
		if got := h.auditEvents(""); len(got) != 4+5 {
			t.Fatalf("whole log: %d events, want 4 and the harness's 4 keys made and 1 revoked", len(got))
		}
		if got := h.auditEvents("&created_after=" + url.QueryEscape(mid.Add(time.Hour).Format(time.RFC3339))); len(got) != 0 {
			t.Fatalf("after the future: %d", len(got))
		}
		if got := h.auditEvents("&created_before=" + url.QueryEscape(start.Format(time.RFC3339Nano))); len(got) != 5 {
			t.Fatalf("before start: %d, want the harness's 5", len(got))
		}
		// Pages of one.
		p := h.do("GET", "/v1/audit-events?limit=1"+after, h.keys["admin"], nil)
		h.expect(p, 200, "")
		if p.json["has_more"] != true {
			t.Fatal("no more after one of four")
		}
		p = h.do("GET", "/v1/audit-events?limit=1"+after+"&cursor="+url.QueryEscape(p.json["next_cursor"].(string)), h.keys["admin"], nil)
		h.expect(p, 200, "")
		if p.json["data"].([]any)[0].(map[string]any)["id"] != all[1]["id"] {
			t.Fatalf("second page %v", p.json)
		}
		// Workspace B's log holds none of it.
		if r := h.do("GET", "/v1/audit-events?limit=100"+after, h.keys["other"], nil); len(r.json["data"].([]any)) != 0 {
			t.Fatalf("workspace B sees %v", r.json["data"])
		}
		for _, q := range []string{"action=DROP%20TABLE", "action=form", "action=" + strings.Repeat("a", 40) + "." + strings.Repeat("b", 40), "created_after=yesterday",
			"created_before=2026-13-01T00:00:00Z", "limit=0", "limit=x", "cursor=bogus"} {
			h.expect(h.do("GET", "/v1/audit-events?"+q, h.keys["admin"], nil), 400, "invalid_request")
		}
		// A cursor of another list is refused.
		fr := h.do("GET", "/v1/api-keys?limit=1", h.keys["admin"], nil)
		h.expect(h.do("GET", "/v1/audit-events?cursor="+url.QueryEscape(fr.json["next_cursor"].(string)), h.keys["admin"], nil), 400, "invalid_request")
	})
}

// A key whose scope can never do what a route does gets 403 before its body is looked at, so
// a bad body does not turn the refusal into a 422.
func TestScopeRefusedBeforeTheBody(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		bad := map[string]any{"name": "", "fields": "not a list", "scope": "everything"}
		h.expect(h.do("POST", "/v1/forms", h.keys["read-only"], bad), 403, "forbidden")
		h.expect(h.do("POST", "/v1/api-keys", h.keys["read-write"], bad), 403, "forbidden")
		h.expect(h.do("PATCH", "/v1/workspace", h.keys["read-write"], bad), 403, "forbidden")
		h.expect(h.do("POST", "/v1/privacy/erase", h.keys["read-write"], bad), 403, "forbidden")
		h.expect(h.do("GET", "/v1/audit-events", h.keys["read-only"], nil), 403, "forbidden")
		// The scope that may act gets the validation error.
		h.expect(h.do("POST", "/v1/forms", h.keys["read-write"], bad), 422, "validation_failed")
		h.expect(h.do("POST", "/v1/api-keys", h.keys["admin"], bad), 422, "validation_failed")
	})
}
