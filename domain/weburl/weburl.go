// Package weburl is an absolute web URL as Formward takes it from an owner or a post: a webhook
// endpoint, the redirect after a submission, a form-backend post's _next. It is parsed once;
// each caller keeps its own length and character rules and turns the errors below into its
// own messages.
package weburl

import (
	"errors"
	"net/url"
	"slices"

	"github.com/formward/formward/domain/origin"
)

// The reasons Parse refuses a text, in the order it checks them.
var (
	// ErrNotAbsolute: the text does not parse as a URL, or it has no host.
	ErrNotAbsolute = errors.New("not an absolute URL with a host")
	// ErrNoScheme: a host but no scheme, as in //example.com/path.
	ErrNoScheme = errors.New("no scheme")
	// ErrScheme: a scheme the caller does not allow.
	ErrScheme = errors.New("scheme not allowed")
	// ErrUserInfo: a user name or password before the host.
	ErrUserInfo = errors.New("carries a user name or password")
)

// URL is an absolute URL with a host, one of the schemes its parser allowed, and no user
// information. The zero URL is none.
type URL struct {
	raw    string
	parsed url.URL
}

// Parse reads raw as an absolute URL with a host, a scheme among schemes (lower case), and no
// user information.
func Parse(raw string, schemes ...string) (URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return URL{}, ErrNotAbsolute
	case u.Scheme == "":
		return URL{}, ErrNoScheme
	case !slices.Contains(schemes, u.Scheme):
		return URL{}, ErrScheme
	case u.User != nil:
		return URL{}, ErrUserInfo
	}
	return URL{raw: raw, parsed: *u}, nil
}

// ParseHTTPS is Parse allowing https only.
func ParseHTTPS(raw string) (URL, error) { return Parse(raw, "https") }

// String is the text the URL was parsed from.
func (u URL) String() string { return u.raw }

// IsZero reports whether u is no URL.
func (u URL) IsZero() bool { return u.raw == "" }

// Canonical is the URL written out again with its origin in canonical form (lower-case host,
// no default port), and that origin; an error when the URL has no origin (origin.Of).
func (u URL) Canonical() (string, origin.Origin, error) {
	p := u.parsed
	o, err := origin.Of(&p)
	if err != nil {
		return "", origin.Origin{}, err
	}
	p.Scheme, p.Host = o.Scheme(), o.Host()
	return p.String(), o, nil
}
