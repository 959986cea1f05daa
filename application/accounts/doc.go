// Package accounts holds the use cases of people and their access: setup, sign-in and sessions, two-step
// verification, OpenID Connect, passwords and their mail, profiles, members, invitations and API
// keys.
package accounts
