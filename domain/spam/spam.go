// Package spam holds the public form's spam rules that need nothing but the post itself (the
// honeypot, the minimum fill time, whom a rate limit counts) and the refusals every rule
// gives. The checks that need a key or a remote service (render token, proof of work,
// captcha, the rate limit's counters) sit behind ports.
package spam

import (
	"net/netip"
	"strings"
	"time"
)

// Reason says why a post was turned away; it is the reason label of formward_spam_total.
type Reason string

// Reasons.
const (
	ReasonHoneypot     Reason = "honeypot"
	ReasonTokenMissing Reason = "token_missing"
	ReasonTokenInvalid Reason = "token_invalid"
	ReasonTokenExpired Reason = "token_expired"
	ReasonTokenReplay  Reason = "token_replayed"
	ReasonTooFast      Reason = "too_fast"
	ReasonPoWMissing   Reason = "pow_missing"
	ReasonPoWInvalid   Reason = "pow_invalid"
	ReasonCaptcha      Reason = "captcha_failed"
	ReasonRateLimited  Reason = "rate_limited"
)

// Rejection is a post turned away as spam; nothing of it is stored. Silent posts (the
// honeypot) are answered as if they had been stored, so the bot learns nothing.
type Rejection struct {
	Reason Reason
	Silent bool
}

func (r *Rejection) Error() string { return "rejected as spam: " + string(r.Reason) }

// RateLimited is a post (or a challenge) over the rate limit of its address.
type RateLimited struct {
	RetryAfter time.Duration
}

func (r *RateLimited) Error() string { return "too many posts from this address" }

// Honeypot reports whether the hidden field that people never see was filled in.
func Honeypot(value string) bool { return strings.TrimSpace(value) != "" }

// TooFast reports whether a page shown at shown was posted at now faster than minSeconds
// allow (0: no minimum).
func TooFast(minSeconds int, shown, now time.Time) bool {
	return minSeconds > 0 && now.Sub(shown) < time.Duration(minSeconds)*time.Second
}

// Client is whom a rate limit counts for an address: an IPv4 address, or the /64 network of
// an IPv6 address (one subscriber gets a whole /64 and can rotate through it). Anything else
// counts as itself.
func Client(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
