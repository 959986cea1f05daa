// Package actionkit holds what the workflow action adapters share: reading an action config
// into violations, a circuit breaker per action, and the plain HTTPS client of the
// integration adapters (Slack, Google).
package actionkit

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/formward/formward/ports"
)

// MaxURL is the longest destination URL an action accepts, as for webhooks.
const MaxURL = 2048

// Checker reads an action config and collects the broken rules, with paths relative to it.
type Checker struct {
	cfg map[string]any
	vs  []ports.ConfigViolation
}

// Check starts reading cfg (nil reads as empty).
func Check(cfg map[string]any) *Checker { return &Checker{cfg: cfg} }

// Add records a violation.
func (c *Checker) Add(key, code, message string) {
	c.vs = append(c.vs, ports.ConfigViolation{Key: key, Code: code, Message: message})
}

// Violations returns the broken rules, nil when there are none.
func (c *Checker) Violations() []ports.ConfigViolation { return c.vs }

// String reads key as a string. A required key that is missing, null or blank is "required";
// a value of another type is "invalid_type". ok is false on any violation or when absent.
func (c *Checker) String(key string, required bool) (string, bool) {
	v, present := c.cfg[key]
	if !present || v == nil {
		if required {
			c.Add(key, "required", key+" is required")
		}
		return "", false
	}
	s, isString := v.(string)
	if !isString {
		c.Add(key, "invalid_type", key+" must be a string")
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		if required {
			c.Add(key, "required", key+" is required")
		}
		return "", false
	}
	return s, true
}

// HTTPSURL reads key as a required absolute https:// URL without credentials.
func (c *Checker) HTTPSURL(key string) (string, bool) {
	raw, ok := c.String(key, true)
	if !ok {
		return "", false
	}
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		c.Add(key, "invalid_url", key+" must be an absolute https:// URL")
	case u.Scheme != "https":
		c.Add(key, "https_required", key+" must use https")
	case u.User != nil:
		c.Add(key, "invalid_url", key+" must not carry a user name or password")
	case len(raw) > MaxURL:
		c.Add(key, "too_long", fmt.Sprintf("%s must be at most %d characters", key, MaxURL))
	default:
		return raw, true
	}
	return "", false
}

// Secret reads the optional write-only signing secret (1 to 256 characters, as for webhooks).
func (c *Checker) Secret(key string) (string, bool) {
	v, present := c.cfg[key]
	if !present || v == nil {
		return "", false
	}
	s, isString := v.(string)
	if !isString {
		c.Add(key, "invalid_type", key+" must be a string")
		return "", false
	}
	if s == "" || len(s) > 256 {
		c.Add(key, "invalid_length", key+" must be 1 to 256 characters")
		return "", false
	}
	return s, true
}

// StringMap reads key as an object of string values; each value that is not a string is
// reported at "key.name". required makes a missing or empty object "required".
func (c *Checker) StringMap(key string, required bool) (map[string]string, bool) {
	v, present := c.cfg[key]
	if !present || v == nil {
		if required {
			c.Add(key, "required", key+" is required")
		}
		return nil, false
	}
	var out map[string]string
	switch m := v.(type) {
	case map[string]string:
		out = m
	case map[string]any:
		out = make(map[string]string, len(m))
		bad := false
		for _, name := range sortedKeys(m) {
			s, isString := m[name].(string)
			if !isString {
				c.Add(key+"."+name, "invalid_type", key+"."+name+" must be a string")
				bad = true
				continue
			}
			out[name] = s
		}
		if bad {
			return nil, false
		}
	default:
		c.Add(key, "invalid_type", key+" must be an object of strings")
		return nil, false
	}
	if required && len(out) == 0 {
		c.Add(key, "required", key+" must have at least one entry")
		return nil, false
	}
	return out, true
}

// OneOf reads an optional string key that must be one of allowed.
func (c *Checker) OneOf(key string, allowed ...string) (string, bool) {
	s, ok := c.String(key, false)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	c.Add(key, "invalid_value", key+" must be one of "+strings.Join(allowed, ", "))
	return "", false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SortedKeys returns m's keys in order, for deterministic violations and output.
func SortedKeys[V any](m map[string]V) []string { return sortedKeys(m) }
