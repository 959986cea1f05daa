package weburl_test

import (
	"errors"
	"testing"

	"github.com/formward/formward/domain/weburl"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{"https://example.com/hook?x=1", nil},
		{"", weburl.ErrNotAbsolute},
		{"https://", weburl.ErrNotAbsolute},
		{"mailto:someone@example.com", weburl.ErrNotAbsolute},
		{"https://exa mple.com/", weburl.ErrNotAbsolute},
		{"//example.com/hook", weburl.ErrNoScheme},
		{"http://example.com/hook", weburl.ErrScheme},
		{"ftp://example.com/", weburl.ErrScheme},
		{"https://user:pass@example.com/", weburl.ErrUserInfo},
		// The scheme is checked before the user information.
		{"http://user@example.com/", weburl.ErrScheme},
	} {
		u, err := weburl.ParseHTTPS(c.in)
		if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
			t.Errorf("ParseHTTPS(%q) = %v, want %v", c.in, err, c.want)
		}
		if err == nil && u.String() != c.in {
			t.Errorf("ParseHTTPS(%q).String() = %q", c.in, u.String())
		}
	}
	if _, err := weburl.Parse("http://example.com/", "https", "http"); err != nil {
		t.Errorf("http refused where allowed: %v", err)
	}
}

func TestCanonical(t *testing.T) {
	u, err := weburl.ParseHTTPS("https://EXAMPLE.com:443/Thanks?a=b")
	if err != nil {
		t.Fatal(err)
	}
	got, o, err := u.Canonical()
	if err != nil || got != "https://example.com/Thanks?a=b" || o.String() != "https://example.com" {
		t.Fatalf("Canonical() = %q, %q, %v", got, o, err)
	}
	if (weburl.URL{}).IsZero() != true || u.IsZero() {
		t.Fatal("IsZero")
	}
}
