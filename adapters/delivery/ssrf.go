package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

var (
	// ErrNotHTTPS means a destination URL is not https://. It holds even with AllowPrivate.
	ErrNotHTTPS = errors.New("url must use https")
	// ErrForbiddenAddress is matched (errors.Is) by every refusal of a non-public address, at
	// registration (CheckURL) and at connect time (Deliver).
	ErrForbiddenAddress = errors.New("address is not public")
)

// Resolver looks up a host's addresses. *net.Resolver satisfies it; tests pass a fake one.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// AddressError is a refused destination address. Kind says why, in words ("loopback",
// "private", "link-local", ...).
type AddressError struct {
	Addr netip.Addr
	Kind string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("destination is %s (%s)", e.described(), e.Addr)
}

func (e *AddressError) described() string {
	article := "a"
	if strings.IndexByte("aeiou", e.Kind[0]) >= 0 {
		article = "an"
	}
	return article + " " + e.Kind + " address"
}

// Unwrap lets errors.Is(err, ErrForbiddenAddress) match.
func (e *AddressError) Unwrap() error { return ErrForbiddenAddress }

// URLError is a destination URL refused by CheckURL. Its message is written for the person who
// registered the URL; Unwrap gives the cause (ErrNotHTTPS, an *AddressError, a lookup error).
type URLError struct {
	Message string
	Err     error
}

func (e *URLError) Error() string { return e.Message }
func (e *URLError) Unwrap() error { return e.Err }

// IsPublicIP reports whether ip may be the destination of an outbound delivery: a globally
// routable unicast address. It refuses loopback, private (RFC 1918), link-local (including the
// cloud metadata address 169.254.169.254), CGNAT, multicast, unspecified, unique-local,
// broadcast, 0.0.0.0/8, reserved, benchmarking and documentation ranges, and every IPv6 form
// that embeds a refused IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16). The
// local-use NAT64 prefix 64:ff9b:1::/48 and Teredo 2001::/32 are refused outright.
func IsPublicIP(ip netip.Addr) bool {
	return refusal(ip) == ""
}

type prefixKind struct {
	prefix netip.Prefix
	kind   string
}

func pk(p, kind string) prefixKind { return prefixKind{netip.MustParsePrefix(p), kind} }

// refusedV4 lists the IPv4 ranges that are not globally reachable (IANA special-purpose
// registry), plus the documentation and benchmarking ranges.
var refusedV4 = []prefixKind{
	pk("0.0.0.0/32", "unspecified"),
	pk("0.0.0.0/8", "reserved"),
	pk("10.0.0.0/8", "private"),
	pk("100.64.0.0/10", "shared (CGNAT)"),
	pk("127.0.0.0/8", "loopback"),
	pk("169.254.0.0/16", "link-local"),
	pk("172.16.0.0/12", "private"),
	pk("192.0.0.0/24", "reserved"),
	pk("192.0.2.0/24", "documentation"),
	pk("192.88.99.0/24", "reserved"),
	pk("192.168.0.0/16", "private"),
	pk("198.18.0.0/15", "benchmarking"),
	pk("198.51.100.0/24", "documentation"),
	pk("203.0.113.0/24", "documentation"),
	pk("224.0.0.0/4", "multicast"),
	pk("255.255.255.255/32", "broadcast"),
	pk("240.0.0.0/4", "reserved"),
}

// refusedV6 lists IPv6 ranges refused whatever they embed. Order matters: the first match names
// the kind. Anything outside 2000::/3 (global unicast) that is not listed here or handled as an
// embedding of IPv4 is refused as "reserved".
var refusedV6 = []prefixKind{
	pk("::/128", "unspecified"),
	pk("::1/128", "loopback"),
	pk("fe80::/10", "link-local"),
	pk("fc00::/7", "unique-local"),
	pk("ff00::/8", "multicast"),
	pk("64:ff9b:1::/48", "local-use NAT64"),
	pk("2001::/32", "Teredo"),
	pk("2001:2::/48", "benchmarking"),
	pk("2001:10::/28", "reserved"),
	pk("2001:db8::/32", "documentation"),
	pk("3fff::/20", "documentation"),
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	global6   = netip.MustParsePrefix("2000::/3")
)

// refusal returns why ip is refused, or "" when it is public.
func refusal(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("")
	if ip.Is4() {
		for _, r := range refusedV4 {
			if r.prefix.Contains(ip) {
				return r.kind
			}
		}
		return ""
	}
	if ip.Is4In6() {
		return embedded(ip.Unmap(), "IPv4-mapped")
	}
	for _, r := range refusedV6 {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b[12:16])), "NAT64")
	case sixToFour.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b[2:6])), "6to4")
	case !global6.Contains(ip):
		return "reserved"
	}
	return ""
}

// embedded judges an IPv6 address by the IPv4 address it carries.
func embedded(v4 netip.Addr, form string) string {
	if k := refusal(v4); k != "" {
		return k + " (" + form + ")"
	}
	return ""
}

// CheckURL validates a destination URL when it is registered: https scheme, a host, no
// userinfo, a valid port, and a host that resolves; unless allowPrivate, every resolved address
// must be public. A nil resolver uses net.DefaultResolver. Errors are *URLError, with messages
// meant for the API caller. Deliver checks addresses again when it connects, so DNS changes
// after registration do not open a way in.
func CheckURL(ctx context.Context, rawURL string, allowPrivate bool, resolver Resolver) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return &URLError{Message: "url is not a valid URL", Err: err}
	}
	if u.Scheme != "https" {
		return &URLError{Message: ErrNotHTTPS.Error(), Err: ErrNotHTTPS}
	}
	if u.User != nil {
		return &URLError{Message: "url must not contain a user name or password"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{Message: "url must have a host"}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return &URLError{Message: "url has an invalid port"}
		}
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := lookup(ctx, resolver, host)
	if err != nil {
		return &URLError{Message: fmt.Sprintf("url host could not be resolved (%s)", host), Err: err}
	}
	if allowPrivate {
		return nil
	}
	for _, a := range addrs {
		if kind := refusal(a); kind != "" {
			ae := &AddressError{Addr: a, Kind: kind}
			return &URLError{Message: fmt.Sprintf("url resolves to %s (%s)", ae.described(), a), Err: ae}
		}
	}
	return nil
}

// lookup returns the addresses of host: the host itself when it is an IP literal.
func lookup(ctx context.Context, resolver Resolver, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ipAddrs, err := resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	addrs := make([]netip.Addr, 0, len(ipAddrs))
	for _, ia := range ipAddrs {
		a, ok := netip.AddrFromSlice(ia.IP)
		if !ok {
			continue
		}
		addrs = append(addrs, a.Unmap().WithZone(ia.Zone))
	}
	if len(addrs) == 0 {
		return nil, errors.New("no addresses found")
	}
	return addrs, nil
}
