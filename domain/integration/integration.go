// Package integration is the integration aggregate: a workspace's connection to a third-party
// service (a Slack bot token, a Google service account) that workflow actions use.
package integration

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// The integration types and the credential each needs.
const (
	TypeSlack        = "slack"
	TypeGoogleSheets = "google_sheets"

	CredentialBotToken           = "bot_token"
	CredentialServiceAccountJSON = "service_account_json"
)

const maxCredential = 64 << 10

// Integration is a connected third-party account of a workspace; its credentials are secret.
type Integration struct {
	id          string
	workspaceID string
	typ         string
	credentials map[string]string
	createdAt   time.Time
}

// Draft is what a client connects: a type and its credentials.
type Draft struct {
	Type        string
	Credentials map[string]string
}

// CredentialKeys returns the credential keys a type takes, or false for an unknown type.
func CredentialKeys(typ string) ([]string, bool) {
	switch typ {
	case TypeSlack:
		return []string{CredentialBotToken}, true
	case TypeGoogleSheets:
		return []string{CredentialServiceAccountJSON}, true
	}
	return nil, false
}

// New checks a draft and builds an integration.
func New(id, workspaceID string, d Draft, now time.Time) (*Integration, error) {
	var vs domain.Violations
	keys, ok := CredentialKeys(d.Type)
	switch {
	case d.Type == "":
		vs.Add("type", "required", "type is required")
	case !ok:
		vs.Add("type", "invalid_value", "type must be slack or google_sheets")
	}
	creds := make(map[string]string, len(keys))
	for _, k := range keys {
		v := strings.TrimSpace(d.Credentials[k])
		path := "credentials." + k
		switch {
		case v == "":
			vs.Add(path, "required", k+" is required for "+d.Type)
		case !text.Field(&vs, path, v):
		case len(v) > maxCredential:
			vs.Add(path, "too_long", k+" must be at most 64 KiB")
		case k == CredentialServiceAccountJSON:
			if msg := checkServiceAccount(v); msg != "" {
				vs.Add(path, "invalid_value", msg)
			}
		}
		creds[k] = v
	}
	if ok {
		for k := range d.Credentials {
			if !contains(keys, k) {
				vs.Add("credentials."+k, "unknown_property", "unknown credential "+k+" for "+d.Type)
			}
		}
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return &Integration{id: id, workspaceID: workspaceID, typ: d.Type, credentials: creds, createdAt: now.UTC()}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func checkServiceAccount(raw string) string {
	var sa struct {
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal([]byte(raw), &sa); err != nil {
		return "service_account_json must be the JSON key file of a Google service account"
	}
	if strings.TrimSpace(sa.ClientEmail) == "" || strings.TrimSpace(sa.PrivateKey) == "" {
		return "service_account_json must contain client_email and private_key"
	}
	return ""
}

// UnmarshalFromDatabase rebuilds a stored integration without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, typ string, credentials map[string]string, createdAt time.Time) *Integration {
	return &Integration{id: id, workspaceID: workspaceID, typ: typ, credentials: credentials, createdAt: createdAt.UTC()}
}

// ID returns the integration ID.
func (i *Integration) ID() string { return i.id }

// WorkspaceID returns the owning workspace.
func (i *Integration) WorkspaceID() string { return i.workspaceID }

// Type returns the integration type (slack, google_sheets).
func (i *Integration) Type() string { return i.typ }

// Credentials returns a copy of the secret credentials; they are never shown to clients.
func (i *Integration) Credentials() map[string]string {
	out := make(map[string]string, len(i.credentials))
	for k, v := range i.credentials {
		out[k] = v
	}
	return out
}

// CreatedAt returns the connection time.
func (i *Integration) CreatedAt() time.Time { return i.createdAt }
