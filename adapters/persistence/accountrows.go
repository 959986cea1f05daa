package persistence

import (
	"fmt"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

type userRow struct {
	ID                string  `gorm:"column:id;primaryKey"`
	Email             string  `gorm:"column:email"`
	Name              string  `gorm:"column:name"`
	PasswordHash      string  `gorm:"column:password_hash"`
	TOTPSecret        []byte  `gorm:"column:totp_secret"`
	RecoveryCodes     string  `gorm:"column:recovery_codes"` // JSON array of base64 SHA-256 hashes
	OIDCSubject       *string `gorm:"column:oidc_subject"`
	CreatedAt         int64   `gorm:"column:created_at"`
	PasswordChangedAt *int64  `gorm:"column:password_changed_at"`
	TimeZone          string  `gorm:"column:time_zone"` // "" when the person chose none
}

func (userRow) TableName() string { return "users" }

func userFromDomain(u *user.User) (userRow, error) {
	codes := u.RecoveryCodes()
	if codes == nil {
		codes = [][]byte{}
	}
	encoded, err := jsoncodec.Marshal(codes) // [][]byte marshals as an array of base64 strings
	if err != nil {
		return userRow{}, fmt.Errorf("encode recovery codes: %w", err)
	}
	r := userRow{ID: u.ID(), Email: u.Email(), Name: u.Name(), PasswordHash: u.PasswordHash(), RecoveryCodes: string(encoded),
		CreatedAt: toMillis(u.CreatedAt()), PasswordChangedAt: toMillisPtr(u.PasswordChangedAt()), TimeZone: u.TimeZone()}
	if secret := u.TOTPSecret(); len(secret) > 0 {
		r.TOTPSecret = secret
	}
	if sub := u.OIDCSubject(); sub != "" {
		r.OIDCSubject = &sub
	}
	return r, nil
}

func (r userRow) toDomain() (*user.User, error) {
	var codes [][]byte
	if err := jsoncodec.Unmarshal([]byte(r.RecoveryCodes), &codes); err != nil {
		return nil, fmt.Errorf("decode recovery codes of user %s: %w", r.ID, err)
	}
	if len(codes) == 0 {
		codes = nil
	}
	var secret []byte
	if len(r.TOTPSecret) > 0 {
		secret = r.TOTPSecret
	}
	var sub string
	if r.OIDCSubject != nil {
		sub = *r.OIDCSubject
	}
	return user.UnmarshalFromDatabase(r.ID, r.Email, r.Name, r.PasswordHash, secret, codes, sub,
		fromMillis(r.CreatedAt), fromMillisPtr(r.PasswordChangedAt), r.TimeZone), nil
}

type membershipRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	UserID      string `gorm:"column:user_id"`
	Role        string `gorm:"column:role"`
	CreatedAt   int64  `gorm:"column:created_at"`
}

func (membershipRow) TableName() string { return "memberships" }

func membershipFromDomain(m *member.Membership) membershipRow {
	return membershipRow{ID: m.ID(), WorkspaceID: m.WorkspaceID(), UserID: m.UserID(), Role: string(m.Role()), CreatedAt: toMillis(m.CreatedAt())}
}

func (r membershipRow) toDomain() *member.Membership {
	return member.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.UserID, member.Role(r.Role), fromMillis(r.CreatedAt))
}

type invitationRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	Email       string `gorm:"column:email"`
	Role        string `gorm:"column:role"`
	TokenHash   []byte `gorm:"column:token_hash"`
	InvitedBy   string `gorm:"column:invited_by"`
	CreatedAt   int64  `gorm:"column:created_at"`
	ExpiresAt   int64  `gorm:"column:expires_at"`
	AcceptedAt  *int64 `gorm:"column:accepted_at"`
}

func (invitationRow) TableName() string { return "invitations" }

func invitationFromDomain(i *invitation.Invitation) invitationRow {
	return invitationRow{ID: i.ID(), WorkspaceID: i.WorkspaceID(), Email: i.Email(), Role: string(i.Role()), TokenHash: i.TokenHash(),
		InvitedBy: i.InvitedBy(), CreatedAt: toMillis(i.CreatedAt()), ExpiresAt: toMillis(i.ExpiresAt()), AcceptedAt: toMillisPtr(i.AcceptedAt())}
}

func (r invitationRow) toDomain() *invitation.Invitation {
	return invitation.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.Email, member.Role(r.Role), r.TokenHash, r.InvitedBy,
		fromMillis(r.CreatedAt), fromMillis(r.ExpiresAt), fromMillisPtr(r.AcceptedAt))
}

type sessionRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	TokenHash   []byte `gorm:"column:token_hash"`
	UserID      string `gorm:"column:user_id"`
	WorkspaceID string `gorm:"column:workspace_id"`
	CreatedAt   int64  `gorm:"column:created_at"`
	LastSeenAt  int64  `gorm:"column:last_seen_at"`
}

func (sessionRow) TableName() string { return "sessions" }

func sessionFromDomain(s *session.Session) sessionRow {
	return sessionRow{ID: s.ID(), TokenHash: s.TokenHash(), UserID: s.UserID(), WorkspaceID: s.WorkspaceID(),
		CreatedAt: toMillis(s.CreatedAt()), LastSeenAt: toMillis(s.LastSeenAt())}
}

func (r sessionRow) toDomain() *session.Session {
	return session.UnmarshalFromDatabase(r.ID, r.TokenHash, r.UserID, r.WorkspaceID, fromMillis(r.CreatedAt), fromMillis(r.LastSeenAt))
}

type userTokenRow struct {
	TokenHash []byte `gorm:"column:token_hash;primaryKey"`
	Purpose   string `gorm:"column:purpose"`
	UserID    string `gorm:"column:user_id"`
	Data      []byte `gorm:"column:data"`
	ExpiresAt int64  `gorm:"column:expires_at"`
}

func (userTokenRow) TableName() string { return "user_tokens" }

func userTokenFromPort(t ports.UserToken) userTokenRow {
	return userTokenRow{TokenHash: t.TokenHash, Purpose: t.Purpose, UserID: t.UserID, Data: t.Data, ExpiresAt: toMillis(t.ExpiresAt)}
}

func (r userTokenRow) toPort() ports.UserToken {
	var data []byte
	if len(r.Data) > 0 {
		data = r.Data
	}
	return ports.UserToken{Purpose: r.Purpose, TokenHash: r.TokenHash, UserID: r.UserID, Data: data, ExpiresAt: fromMillis(r.ExpiresAt)}
}
