// Package origin is a web origin as Formward keeps and compares it: the sites a form lets post
// to it (allowed_origins), call it from a script (CORS) and frame it, and the site a post came
// from or a redirect goes to. There is one parser and one canonical form, so an origin the
// owner stored and the one a browser sends compare equal, and what reaches a header is only
// ever scheme://host[:port].
package origin

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Origin is scheme://host[:port] in canonical form: scheme http or https, the host in lower
// case (an ASCII name or an IP address, IPv6 in brackets), the port only when it is not the
// scheme's default. The zero Origin is none.
type Origin struct {
	scheme string
	host   string // canonical host[:port]
}

// maxLength bounds the text Parse reads; a longer text is no origin.
const maxLength = 2000

var errSyntax = errors.New("an origin is https://host or http://host[:port], without a path")

// Parse reads an origin: scheme://host[:port] with scheme http or https and nothing else (no
// path, not even "/", no query, fragment or user information, no wildcard, no keyword such as
// 'self').
func Parse(raw string) (Origin, error) {
	if len(raw) > maxLength {
		return Origin{}, errSyntax
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" || !strings.EqualFold(raw, u.Scheme+"://"+u.Host) {
		return Origin{}, errSyntax
	}
	o, err := Of(u)
	if err != nil {
		return Origin{}, fmt.Errorf("%v: %w", errSyntax, err)
	}
	return o, nil
}

// Of returns the origin of an absolute http or https URL (whatever its path, query and
// fragment). A URL with user information has none.
func Of(u *url.URL) (Origin, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return Origin{}, errors.New("the scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" {
		return Origin{}, errors.New("a host is required")
	}
	if u.User != nil {
		return Origin{}, errors.New("an origin carries no user name or password")
	}
	host, err := canonicalHost(scheme, u.Host)
	if err != nil {
		return Origin{}, err
	}
	return Origin{scheme: scheme, host: host}, nil
}

// String is the origin in canonical form; "" for the zero Origin.
func (o Origin) String() string {
	if o.scheme == "" {
		return ""
	}
	return o.scheme + "://" + o.host
}

// IsZero reports whether o is no origin.
func (o Origin) IsZero() bool { return o.scheme == "" }

// Scheme is "http" or "https".
func (o Origin) Scheme() string { return o.scheme }

// Host is host[:port] in canonical form, as a URL written out again carries it.
func (o Origin) Host() string { return o.host }

// canonicalHost checks a URL's host[:port] (an ASCII name of letters, digits, hyphens and
// dots, an IPv4 address, or an IPv6 address in brackets without a zone; a port of 1 to 65535)
// and returns it in lower case without the scheme's default port.
func canonicalHost(scheme, hostport string) (string, error) {
	name, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.Index(hostport, "]")
		if end < 0 {
			return "", errors.New("the host is not a valid IPv6 address")
		}
		name, port = hostport[1:end], hostport[end+1:]
		ip, err := netip.ParseAddr(name)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", errors.New("the host is not a valid IPv6 address")
		}
		name = "[" + ip.String() + "]"
		if port != "" {
			p, ok := strings.CutPrefix(port, ":")
			if !ok {
				return "", errors.New("the host is not a valid IPv6 address")
			}
			port = p
		}
	} else {
		if i := strings.LastIndex(hostport, ":"); i >= 0 {
			name, port = hostport[:i], hostport[i+1:]
			if port == "" {
				return "", errors.New("the port is empty")
			}
		}
		name = strings.ToLower(name)
		if name == "" {
			return "", errors.New("a host is required")
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
				return "", errors.New("the host must be an ASCII name (use the xn-- form of international names) or an IP address, without wildcards")
			}
		}
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") || strings.Contains(name, "..") {
			return "", errors.New("the host is not a valid name")
		}
	}
	if strings.HasSuffix(hostport, ":") {
		return "", errors.New("the port is empty")
	}
	if port == "" {
		return name, nil
	}
	for _, r := range port {
		if r < '0' || r > '9' {
			return "", errors.New("the port must be 1 to 65535")
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", errors.New("the port must be 1 to 65535")
	}
	if (scheme == "https" && n == 443) || (scheme == "http" && n == 80) {
		return name, nil
	}
	return name + ":" + strconv.Itoa(n), nil
}
