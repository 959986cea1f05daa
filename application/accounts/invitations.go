package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// ErrAlreadyMember means the invited email belongs to a member of the workspace already.
var ErrAlreadyMember = member.ErrAlreadyMember

// ListInvitations reads a page of the principal's workspace's pending invitations, newest first.
type ListInvitations struct{ Page ports.Page }

// ListInvitationsHandler lists pending invitations.
type ListInvitationsHandler struct {
	invitations ports.InvitationRepository
	clock       ports.Clock
}

// NewListInvitationsHandler makes the query.
func NewListInvitationsHandler(invitations ports.InvitationRepository, clock ports.Clock) ListInvitationsHandler {
	return ListInvitationsHandler{invitations: invitations, clock: clock}
}

// Handle returns up to Page.Limit invitations neither accepted nor expired, and whether more exist.
func (h ListInvitationsHandler) Handle(ctx context.Context, q ListInvitations) ([]*invitation.Invitation, bool, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*invitation.Invitation, error) {
		return h.invitations.ListPending(ctx, p.WorkspaceID, h.clock.Now(), page)
	})
}

// InviteMember invites a person by email to the principal's workspace with a role.
type InviteMember struct {
	Email string
	Role  string
}

// CreatedInvitation is the new invitation and its accept link, shown once: only the hash of
// its token is stored. Emailed reports whether the link was also sent to the person.
type CreatedInvitation struct {
	Invitation *invitation.Invitation
	AcceptURL  string
	Emailed    bool
}

// InviteMemberHandler makes invitations and records member.invited.
type InviteMemberHandler struct {
	invitations ports.InvitationRepository
	users       ports.UserRepository
	members     ports.MembershipRepository
	workspaces  ports.WorkspaceRepository
	mailer      ports.Mailer
	ids         ports.IDs
	clock       ports.Clock
	publicURL   string
}

// NewInviteMemberHandler makes the command; mailer is nil when SMTP is not configured, and
// publicURL is the base of the accept link.
func NewInviteMemberHandler(invitations ports.InvitationRepository, users ports.UserRepository, members ports.MembershipRepository,
	workspaces ports.WorkspaceRepository, mailer ports.Mailer, ids ports.IDs, clock ports.Clock, publicURL string) InviteMemberHandler {
	return InviteMemberHandler{invitations: invitations, users: users, members: members, workspaces: workspaces, mailer: mailer,
		ids: ids, clock: clock, publicURL: strings.TrimRight(publicURL, "/")}
}

// Handle stores the invitation (valid seven days, single use) and emails the link when a mailer
// is configured. Only an owner invites an owner; a person who is already a member is a conflict.
func (h InviteMemberHandler) Handle(ctx context.Context, cmd InviteMember) (CreatedInvitation, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return CreatedInvitation{}, err
	}
	if member.Role(cmd.Role) == member.RoleOwner && !p.Allows(access.ManageOwners) {
		return CreatedInvitation{}, ownersOnly(member.ErrOwnersOnly)
	}
	token, err := newSecretToken()
	if err != nil {
		return CreatedInvitation{}, fmt.Errorf("generate invitation token: %w", err)
	}
	now := h.clock.Now()
	inv, err := invitation.New(h.ids.New(ports.PrefixInvitation), p.WorkspaceID, cmd.Email, member.Role(cmd.Role), invitation.HashToken(token), p.Actor.ID, now)
	if err != nil {
		return CreatedInvitation{}, err
	}
	if u, err := h.users.FindByEmail(ctx, inv.Email()); err == nil {
		if _, err := h.members.Find(ctx, p.WorkspaceID, u.ID()); err == nil {
			return CreatedInvitation{}, ErrAlreadyMember
		} else if !errors.Is(err, domain.ErrNotFound) {
			return CreatedInvitation{}, err
		}
	} else if !errors.Is(err, domain.ErrNotFound) {
		return CreatedInvitation{}, err
	}
	e, err := p.AuditEvent(h.ids, now, audit.MemberInvited, &audit.Target{Type: "invitation", ID: inv.ID()},
		map[string]any{"email": inv.Email(), "role": string(inv.Role())})
	if err != nil {
		return CreatedInvitation{}, err
	}
	if err := h.invitations.Create(ctx, inv, e); err != nil {
		return CreatedInvitation{}, err
	}
	out := CreatedInvitation{Invitation: inv, AcceptURL: h.publicURL + "/app/invitations/" + token}
	if h.mailer != nil {
		// The link is also shown to whoever invited, so a failed send leaves a usable invitation.
		out.Emailed = h.mailer.Send(ctx, h.mail(ctx, inv, out.AcceptURL)) == nil
	}
	return out, nil
}

func (h InviteMemberHandler) mail(ctx context.Context, inv *invitation.Invitation, link string) ports.Mail {
	name := "a Formward workspace"
	if w, err := h.workspaces.Get(ctx, inv.WorkspaceID()); err == nil {
		name = "the Formward workspace " + w.Name()
	}
	return ports.Mail{To: inv.Email(), Subject: "You are invited to " + name,
		Text: "You have been invited to join " + name + " as " + string(inv.Role()) + ".\n\n" +
			"Accept the invitation within 7 days:\n" + link + "\n\n" +
			"If you did not expect this, ignore this message.\n"}
}

// WithdrawInvitation withdraws a pending invitation of the principal's workspace.
type WithdrawInvitation struct{ ID string }

// WithdrawInvitationHandler withdraws invitations and records member.invitation_withdrawn.
type WithdrawInvitationHandler struct {
	invitations ports.InvitationRepository
	ids         ports.IDs
	clock       ports.Clock
}

// NewWithdrawInvitationHandler makes the command.
func NewWithdrawInvitationHandler(invitations ports.InvitationRepository, ids ports.IDs, clock ports.Clock) WithdrawInvitationHandler {
	return WithdrawInvitationHandler{invitations: invitations, ids: ids, clock: clock}
}

// Handle deletes the invitation; its link stops working at once.
func (h WithdrawInvitationHandler) Handle(ctx context.Context, cmd WithdrawInvitation) error {
	p, inv, err := auth.Load(ctx, access.ManageAccount, h.invitations, cmd.ID)
	if err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.InvitationWithdrawn, &audit.Target{Type: "invitation", ID: inv.ID()},
		map[string]any{"email": inv.Email(), "role": string(inv.Role())})
	if err != nil {
		return err
	}
	return h.invitations.Delete(ctx, p.WorkspaceID, inv.ID(), e)
}

// GetInvitation reads the invitation behind an accept link, for the accept page.
type GetInvitation struct{ Token string }

// InvitationView is what the accept page shows: the invitation, the workspace's name, and
// whether the invited email already has an account (then it asks to sign in, not for a password).
type InvitationView struct {
	Invitation    *invitation.Invitation
	WorkspaceName string
	UserExists    bool
}

// GetInvitationHandler reads invitations by token; it needs no principal (the link is the proof).
type GetInvitationHandler struct {
	invitations ports.InvitationRepository
	workspaces  ports.WorkspaceRepository
	users       ports.UserRepository
	clock       ports.Clock
}

// NewGetInvitationHandler makes the query.
func NewGetInvitationHandler(invitations ports.InvitationRepository, workspaces ports.WorkspaceRepository, users ports.UserRepository, clock ports.Clock) GetInvitationHandler {
	return GetInvitationHandler{invitations: invitations, workspaces: workspaces, users: users, clock: clock}
}

// Handle returns the usable invitation; an unknown, expired, spent or withdrawn one gives
// invitation.ErrNotUsable alike.
func (h GetInvitationHandler) Handle(ctx context.Context, q GetInvitation) (InvitationView, error) {
	inv, err := usableInvitation(ctx, h.invitations, q.Token, h.clock)
	if err != nil {
		return InvitationView{}, err
	}
	w, err := h.workspaces.Get(ctx, inv.WorkspaceID())
	if err != nil {
		return InvitationView{}, err
	}
	_, err = h.users.FindByEmail(ctx, inv.Email())
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return InvitationView{}, err
	}
	return InvitationView{Invitation: inv, WorkspaceName: w.Name(), UserExists: err == nil}, nil
}

func usableInvitation(ctx context.Context, invitations ports.InvitationRepository, token string, clock ports.Clock) (*invitation.Invitation, error) {
	if token == "" {
		return nil, invitation.ErrNotUsable
	}
	inv, err := invitations.FindByToken(ctx, invitation.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return nil, invitation.ErrNotUsable
	}
	if err != nil {
		return nil, err
	}
	if !inv.Usable(clock.Now()) {
		return nil, invitation.ErrNotUsable
	}
	return inv, nil
}

// ErrSignInToAccept means the invited email already has an account: that person signs in
// first and then accepts, so an invitation link alone never opens an existing account.
var ErrSignInToAccept = domain.Conflict("an account with this email exists: sign in to accept the invitation")

// ErrOtherAccount means a signed-in person tried to accept an invitation sent to another email.
var ErrOtherAccount = fmt.Errorf("%w: this invitation was sent to another email address", auth.ErrForbidden)

// AcceptInvitation joins the workspace through an accept link. A person without an account
// gives a Name and a Password, which create it; a person with one accepts while signed in
// (SignedInUserID). IP is the client's address, kept only as its keyed hash.
type AcceptInvitation struct {
	Token          string
	Name           string
	Password       string
	IP             string
	SignedInUserID string
}

// AcceptInvitationHandler spends invitations, creates the user when needed and the membership,
// records member.joined, and signs the person in.
type AcceptInvitationHandler struct {
	invitations ports.InvitationRepository
	users       ports.UserRepository
	passwords   ports.PasswordHasher
	ids         ports.IDs
	clock       ports.Clock
	starter     sessionStarter
}

// NewAcceptInvitationHandler makes the command.
func NewAcceptInvitationHandler(invitations ports.InvitationRepository, users ports.UserRepository, memberships ports.MembershipRepository,
	sessions ports.SessionRepository, auditLog ports.AuditLog, passwords ports.PasswordHasher, ids ports.IDs, clock ports.Clock,
	ipHasher ports.IPHasher) AcceptInvitationHandler {
	return AcceptInvitationHandler{invitations: invitations, users: users, passwords: passwords, ids: ids, clock: clock,
		starter: newSessionStarter(sessions, memberships, auditLog, ids, clock, ipHasher)}
}

// Handle spends the invitation in one transaction with the new user (if any), the membership
// and member.joined; of concurrent accepts one wins and the others get invitation.ErrNotUsable.
// It then starts a session in the invited workspace.
func (h AcceptInvitationHandler) Handle(ctx context.Context, cmd AcceptInvitation) (SignedIn, error) {
	inv, err := usableInvitation(ctx, h.invitations, cmd.Token, h.clock)
	if err != nil {
		return SignedIn{}, err
	}
	existing, err := h.users.FindByEmail(ctx, inv.Email())
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return SignedIn{}, err
	}
	// The password is checked and hashed before the invitation is locked: hashing is slow.
	var newUser *user.User
	switch {
	case existing != nil && cmd.SignedInUserID == "":
		return SignedIn{}, ErrSignInToAccept
	case existing != nil && existing.ID() != cmd.SignedInUserID, existing == nil && cmd.SignedInUserID != "":
		return SignedIn{}, ErrOtherAccount
	case existing == nil:
		now := h.clock.Now()
		u, err := user.New(h.ids.New(ports.PrefixUser), inv.Email(), cmd.Name, now)
		vs, err := domain.ViolationsOf(err)
		if err != nil {
			return SignedIn{}, err
		}
		pw, _ := domain.ViolationsOf(user.CheckPassword(cmd.Password))
		vs = append(vs, pw...)
		if err := vs.Err(); err != nil {
			return SignedIn{}, err
		}
		hash, err := h.passwords.Hash(cmd.Password)
		if err != nil {
			return SignedIn{}, fmt.Errorf("hash password: %w", err)
		}
		u.SetPasswordHash(hash, now)
		newUser = u
	}
	ipHash := hashIP(h.starter.ipHasher, cmd.IP)
	done, err := h.invitations.Accept(ctx, invitation.HashToken(cmd.Token), func(inv *invitation.Invitation, found *user.User) (ports.InvitationAcceptance, error) {
		now := h.clock.Now()
		if err := inv.Accept(now); err != nil {
			return ports.InvitationAcceptance{}, err
		}
		// Somebody may have signed up with this email since the check above.
		u := newUser
		if found != nil || newUser == nil {
			if found == nil || newUser != nil || found.ID() != cmd.SignedInUserID {
				return ports.InvitationAcceptance{}, ErrSignInToAccept
			}
			u = found
		}
		m, err := member.New(h.ids.New(ports.PrefixMembership), inv.WorkspaceID(), u.ID(), inv.Role(), now)
		if err != nil {
			return ports.InvitationAcceptance{}, err
		}
		joined, err := audit.New(h.ids.New(ports.PrefixAudit), inv.WorkspaceID(), audit.MemberJoined, userActor(u),
			&audit.Target{Type: "membership", ID: m.ID()}, ipHash,
			map[string]any{"role": string(m.Role()), "via": "invitation", "invitation_id": inv.ID()}, now)
		if err != nil {
			return ports.InvitationAcceptance{}, err
		}
		return ports.InvitationAcceptance{NewUser: newUser, Membership: m, Events: []audit.Event{joined}}, nil
	})
	if err != nil {
		return SignedIn{}, err
	}
	u := done.NewUser
	if u == nil {
		u = existing
	}
	return h.starter.start(ctx, u, done.Membership.WorkspaceID(), cmd.IP)
}
