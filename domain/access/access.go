// Package access is the permission model shared by API key scopes and member roles: every use
// case asks for a permission, and a principal holds it through its key's scope or its role.
package access

// Permission is a class of action.
type Permission string

// The permissions a scope or a role may grant.
const (
	// Read reads forms, submissions, workflows, webhooks, integrations and their logs.
	Read Permission = "read"
	// Write creates, changes and deletes them.
	Write Permission = "write"
	// ManageAccount manages the workspace: members, invitations, API keys, billing settings,
	// privacy requests and the audit log (admin keys, owners and admins).
	ManageAccount Permission = "manage-account"
	// ManageOwners grants or takes the owner role and deletes the workspace (owners only).
	ManageOwners Permission = "manage-owners"
)

// Grant is anything that holds permissions: a key's scope or a member's role.
type Grant interface {
	Allows(p Permission) bool
}
