package apptest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Store is every repository fake over one shared audit log, wired to each other as one
// database's tables are.
type Store struct {
	Workspaces   *Workspaces
	Keys         *Keys
	Forms        *Forms
	Submissions  *Submissions
	Audit        *Audit
	Users        *Users
	Memberships  *Memberships
	Sessions     *Sessions
	Tokens       *UserTokens
	Flashes      *Flashes
	Columns      *ResponseColumns
	Throttle     *Throttle
	AccountMail  *AccountMail
	DataKeys     *DataKeys
	Webhooks     *Webhooks
	Deliveries   *Deliveries
	Workflows    *Workflows
	Integrations *Integrations
	Runs         *Runs
}

// NewStore returns an empty store.
func NewStore() *Store {
	a := &Audit{}
	s := &Store{
		Audit:        a,
		Workspaces:   &Workspaces{rows[*workspace.Workspace]{Audit: a}},
		Keys:         &Keys{Audit: a},
		Submissions:  &Submissions{rows: rows[*submission.Submission]{Audit: a}},
		Sessions:     &Sessions{ByID: map[string]*session.Session{}},
		Tokens:       &UserTokens{},
		Flashes:      &Flashes{},
		Throttle:     &Throttle{Places: map[string][]throttlePlace{}},
		AccountMail:  &AccountMail{},
		DataKeys:     &DataKeys{},
		Deliveries:   &Deliveries{Items: map[string]*webhook.Delivery{}},
		Runs:         &Runs{items: map[string]*workflow.Run{}},
		Workflows:    &Workflows{newTable(func(w *workflow.Workflow) *workflow.Workflow { c := *w; return &c })},
		Integrations: &Integrations{table: newTable(func(i *integration.Integration) *integration.Integration { return i })},
	}
	s.Webhooks = &Webhooks{table: newTable(func(w *webhook.Webhook) *webhook.Webhook { c := *w; return &c }), Deliveries: s.Deliveries}
	s.Webhooks.Audit, s.Workflows.Audit, s.Integrations.Audit = a, a, a
	s.Forms = &Forms{rows: rows[*form.Form]{Audit: a}, Submissions: s.Submissions}
	s.Columns = &ResponseColumns{Forms: s.Forms}
	s.Memberships = &Memberships{Workspaces: s.Workspaces, Sessions: s.Sessions, Audit: a}
	s.Users = &Users{ByID: map[string]*user.User{}, Memberships: s.Memberships, Audit: a}
	s.Memberships.Users = s.Users
	return s
}

// Harness is one application wired to a fresh store, a fixed clock and sequential IDs.
type Harness struct {
	*Store
	App      *application.Application
	Clock    *Clock
	IDs      *IDs
	IPHasher *IPHasher
	URLs     *URLs
}

func newHarness() *Harness {
	return &Harness{Store: NewStore(), Clock: &Clock{At: Now}, IDs: &IDs{}, IPHasher: &IPHasher{Key: []byte("server secret")}, URLs: &URLs{}}
}

// New returns an application with the form, submission, key and workspace fakes.
func New() *Harness { return NewWith(application.Settings{}) }

// NewWith is New with the settings and the dependencies each add sets (WithWebhooks, …).
func NewWith(s application.Settings, adds ...func(*Harness, *application.Deps)) *Harness {
	h := newHarness()
	d := application.Deps{
		Workspaces: h.Workspaces, Keys: h.Keys, Forms: h.Forms, Submissions: h.Submissions,
		IDs: h.IDs, Clock: h.Clock, IPHasher: h.IPHasher, Columns: h.Columns,
	}
	for _, add := range adds {
		add(h, &d)
	}
	h.App = application.New(d, s)
	return h
}

// Advance moves the clock.
func (h *Harness) Advance(d time.Duration) { h.Clock.At = h.Clock.At.Add(d) }

// As returns a context in which an API key of the workspace with the scope acts.
func As(workspaceID string, scope apikey.Scope) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: workspaceID, KeyID: "key_test",
		Scope: scope, Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "key_test", Name: "test key"}})
}

// CreateForm creates a form named Contact in the workspace, as its admin key.
func (h *Harness) CreateForm(t *testing.T, ws string, fields ...form.FieldSpec) *form.Form {
	t.Helper()
	v, err := h.App.Commands.CreateForm.Handle(As(ws, apikey.ScopeAdmin), forms.CreateForm{
		Draft: form.Draft{Name: "Contact", Fields: fields}})
	if err != nil {
		t.Fatalf("CreateForm: %v", err)
	}
	return v.Form
}

// SetStatus changes the form's status, as the workspace's admin key.
func (h *Harness) SetStatus(t *testing.T, ws, id, status string) *form.Form {
	t.Helper()
	v, err := h.App.Commands.UpdateForm.Handle(As(ws, apikey.ScopeAdmin), forms.UpdateForm{ID: id,
		Patch: form.Patch{Status: Ptr(status)}})
	if err != nil {
		t.Fatalf("UpdateForm(status=%s): %v", status, err)
	}
	return v.Form
}

// NameAndAge are a form's fields: a required text field and a number field.
func NameAndAge() []form.FieldSpec {
	return []form.FieldSpec{
		{Label: "Name", Type: "text", Required: true},
		{Label: "Age", Type: "number"},
	}
}

// Crypto are the real adapters the accounts harness uses, which this package may not import:
// a password hasher (with cheap parameters), TOTP, and a cipher over the store's data keys.
type Crypto struct {
	Passwords ports.PasswordHasher
	TOTP      ports.TOTP
	Cipher    func(ports.DataKeyRepository, ports.IDs, ports.Clock) ports.Cipher
}

// AccountsHarness is one application with every account port faked in memory but the
// password hasher, TOTP and cipher, which are the real ones.
type AccountsHarness struct {
	*Harness
	Passwords *Passwords
	OIDC      *OIDC
	Mailer    *Mailer
}

// NewAccounts returns an application with the account fakes, answering at
// https://forms.example.com/.
func NewAccounts(t *testing.T, c Crypto) *AccountsHarness {
	t.Helper()
	h := &AccountsHarness{
		Harness:   newHarness(),
		Passwords: &Passwords{PasswordHasher: c.Passwords},
		OIDC:      &OIDC{Identities: map[string]ports.OIDCIdentity{}, Refusals: map[string]error{}},
		Mailer:    &Mailer{},
	}
	h.App = application.New(application.Deps{
		Workspaces: h.Workspaces, IDs: h.IDs, Clock: h.Clock, IPHasher: h.IPHasher,
		Users: h.Users, Memberships: h.Memberships, Sessions: h.Sessions, Tokens: h.Tokens, Flashes: h.Flashes, Audit: h.Audit,
		Throttle: h.Throttle, Passwords: h.Passwords, TOTP: c.TOTP, OIDC: h.OIDC, Mailer: h.Mailer, AccountMail: h.AccountMail,
		Cipher: c.Cipher(h.DataKeys, h.IDs, h.Clock),
	}, application.Settings{PublicURL: "https://forms.example.com/"})
	return h
}

// AddWorkspace creates a workspace.
func (h *AccountsHarness) AddWorkspace(t *testing.T, name string) string {
	t.Helper()
	w, err := h.App.Commands.CreateWorkspace.Handle(context.Background(), workspaceapp.CreateWorkspace{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

// AddUser creates a user with a password and a membership of each workspace given (owner of
// the first, editor of the others).
func (h *AccountsHarness) AddUser(t *testing.T, email, password string, workspaceIDs ...string) *user.User {
	t.Helper()
	u, err := user.New(h.IDs.New(ports.PrefixUser), email, strings.Split(email, "@")[0], h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	hash, err := h.Passwords.Hash(password)
	if err != nil {
		t.Fatal(err)
	}
	u.SetPasswordHash(hash, h.Clock.Now())
	if err := h.Users.Create(context.Background(), u, nil); err != nil {
		t.Fatal(err)
	}
	for i, w := range workspaceIDs {
		role := member.RoleOwner
		if i > 0 {
			role = member.RoleEditor
		}
		m, err := member.New(h.IDs.New(ports.PrefixMembership), w, u.ID(), role, h.Clock.Now().Add(time.Duration(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Memberships.Create(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// Compile-time checks that the fakes satisfy the ports.
var (
	_ ports.Clock                 = (*Clock)(nil)
	_ ports.IDs                   = (*IDs)(nil)
	_ ports.IPHasher              = (*IPHasher)(nil)
	_ ports.WorkspaceRepository   = (*Workspaces)(nil)
	_ ports.APIKeyRepository      = (*Keys)(nil)
	_ ports.FormRepository        = (*Forms)(nil)
	_ ports.SubmissionRepository  = (*Submissions)(nil)
	_ ports.UserRepository        = (*Users)(nil)
	_ ports.MembershipRepository  = (*Memberships)(nil)
	_ ports.SessionRepository     = (*Sessions)(nil)
	_ ports.UserTokenRepository   = (*UserTokens)(nil)
	_ ports.FlashRepository       = (*Flashes)(nil)
	_ ports.AuditLog              = (*Audit)(nil)
	_ ports.SignInThrottle        = (*Throttle)(nil)
	_ ports.AccountMailOutbox     = (*AccountMail)(nil)
	_ ports.DataKeyRepository     = (*DataKeys)(nil)
	_ ports.PasswordHasher        = (*Passwords)(nil)
	_ ports.OIDCProvider          = (*OIDC)(nil)
	_ ports.Mailer                = (*Mailer)(nil)
	_ ports.WebhookRepository     = (*Webhooks)(nil)
	_ ports.DeliveryRepository    = (*Deliveries)(nil)
	_ ports.WorkflowRepository    = (*Workflows)(nil)
	_ ports.IntegrationRepository = (*Integrations)(nil)
	_ ports.RunRepository         = (*Runs)(nil)
	_ ports.URLChecker            = (*URLs)(nil)
	_ ports.ActionRunner          = StubRunner{}
)
