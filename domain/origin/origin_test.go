package origin_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/domain/origin"
)

func TestParseCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://owner.example", "https://owner.example"},
		{"HTTPS://Owner.Example", "https://owner.example"},
		{"https://owner.example:443", "https://owner.example"},
		{"http://owner.example:443", "http://owner.example:443"},
		{"https://owner.example:80", "https://owner.example:80"},
		{"http://localhost:8080", "http://localhost:8080"},
		{"http://localhost:08080", "http://localhost:8080"},
		{"http://127.0.0.1:80", "http://127.0.0.1"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"https://[::1]:443", "https://[::1]"},
		{"https://[2001:DB8:0:0::1]", "https://[2001:db8::1]"},
		{"http://[::FFFF:127.0.0.1]", "http://[::ffff:127.0.0.1]"},
		{"https://sub.owner.example", "https://sub.owner.example"},
		{"https://xn--bcher-kva.test", "https://xn--bcher-kva.test"},
	} {
		got, err := origin.Parse(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		// Canonical text parses to itself: stored origins read back equal.
		again, err := origin.Parse(got.String())
		if err != nil || again != got {
			t.Errorf("Parse(%q) again = %q, %v", got, again, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"", "*", "'self'", "'none'", "null", "a.example", "//a.example", "ftp://a.example", "javascript:alert(1)",
		"https://*.example", "https://*", "http://*:8080", "https://a.*.example",
		"https://a.example/", "https://a.example/x", "https://a.example?x", "https://a.example#x",
		"https://a.example;sandbox", "https://a.example sandbox", "https://a.example,https://b.example",
		"https://u@a.example", "https://u:p@a.example", "https://a.example:0", "https://a.example:65536",
		"https://a.example:", "https://a.example:+1", "https://a.example\x00", "https://bücher.example",
		"https://a.example'", "https://.example", "https://-a.example", "https://a..example",
		"http://[::1", "http://[::1]:", "http://[::1]x", "http://[fe80::1%25eth0]", "http://[127.0.0.1]",
		"http://::1:8080", "https://" + strings.Repeat("a", 2000) + ".example",
	} {
		if got, err := origin.Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted: %q", in, got)
		}
	}
}

func TestOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://Owner.Example:443/thanks?a=1#top", "https://owner.example"},
		{"http://[::1]:8080/page", "http://[::1]:8080"},
		{"https://owner.example:8443/", "https://owner.example:8443"},
	} {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := origin.Of(u)
		if err != nil || got.String() != c.want {
			t.Errorf("Of(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"/relative", "mailto:a@b.example", "https://u@a.example/", "ftp://a.example/x", "https://*.example/"} {
		u, err := url.Parse(in)
		if err != nil {
			continue
		}
		if got, err := origin.Of(u); err == nil {
			t.Errorf("Of(%q) accepted: %q", in, got)
		}
	}
}

func TestZeroAndParts(t *testing.T) {
	var zero origin.Origin
	if !zero.IsZero() || zero.String() != "" {
		t.Fatalf("zero origin: %q", zero)
	}
	o, err := origin.Parse("HTTP://[::1]:8080")
	if err != nil || o.IsZero() || o.Scheme() != "http" || o.Host() != "[::1]:8080" {
		t.Fatalf("parts of %q: %q %q %v", o, o.Scheme(), o.Host(), err)
	}
	// Origins compare with ==: equal text, equal value.
	a, _ := origin.Parse("https://A.example:443")
	b, _ := origin.Parse("https://a.example")
	if a != b {
		t.Fatalf("%q != %q", a, b)
	}
}
