package delivery

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/delivery/deliverytest"
)

var addressCases = []struct {
	addr   string
	public bool
	kind   string // expected start of the refusal's kind
}{
	{"127.0.0.1", false, "loopback"},
	{"127.255.0.9", false, "loopback"},
	{"10.1.2.3", false, "private"},
	{"172.16.0.1", false, "private"},
	{"172.31.255.255", false, "private"},
	{"192.168.1.1", false, "private"},
	{"169.254.169.254", false, "link-local"}, // cloud metadata
	{"100.64.0.1", false, "shared (CGNAT)"},
	{"0.0.0.0", false, "unspecified"},
	{"0.1.2.3", false, "reserved"},
	{"224.0.0.1", false, "multicast"},
	{"239.255.255.250", false, "multicast"},
	{"255.255.255.255", false, "broadcast"},
	{"240.0.0.1", false, "reserved"},
	{"198.18.0.1", false, "benchmarking"},
	{"192.0.2.10", false, "documentation"},
	{"::1", false, "loopback"},
	{"::", false, "unspecified"},
	{"fe80::1", false, "link-local"},
	{"fc00::1", false, "unique-local"},
	{"fd12::1", false, "unique-local"},
	{"ff02::1", false, "multicast"},
	{"::ffff:127.0.0.1", false, "loopback (IPv4-mapped)"},
	{"::ffff:10.0.0.1", false, "private (IPv4-mapped)"},
	{"::ffff:169.254.169.254", false, "link-local (IPv4-mapped)"},
	{"64:ff9b::a00:1", false, "private (NAT64)"},      // NAT64 of 10.0.0.1
	{"64:ff9b::7f00:1", false, "loopback (NAT64)"},    // NAT64 of 127.0.0.1
	{"64:ff9b:1::808:808", false, "local-use NAT64"},  // local-use prefix, whatever it embeds
	{"2002:a00:1::", false, "private (6to4)"},         // 6to4 of 10.0.0.1
	{"2002:a9fe:a9fe::1", false, "link-local (6to4)"}, // 6to4 of 169.254.169.254
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "Teredo"},
	{"2001:db8::1", false, "documentation"},
	{"::a00:1", false, "reserved"}, // deprecated IPv4-compatible form
	{"100::1", false, "reserved"},  // discard-only

	{"93.184.216.34", true, ""},
	{"8.8.8.8", true, ""},
	{"172.32.0.1", true, ""}, // just past 172.16/12
	{"2606:4700:4700::1111", true, ""},
	{"2a00:1450:4001:80b::200e", true, ""},
	{"::ffff:93.184.216.34", true, ""},
	{"64:ff9b::808:808", true, ""}, // NAT64 of 8.8.8.8
	{"2002:808:808::1", true, ""},  // 6to4 of 8.8.8.8
}

func TestIsPublicIP(t *testing.T) {
	for _, tc := range addressCases {
		t.Run(tc.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tc.addr)
			if got := IsPublicIP(ip); got != tc.public {
				t.Fatalf("IsPublicIP(%s) = %v, want %v (kind %q)", tc.addr, got, tc.public, refusal(ip))
			}
			if kind := refusal(ip); !strings.HasPrefix(kind, tc.kind) {
				t.Fatalf("kind of %s = %q, want %q", tc.addr, kind, tc.kind)
			}
		})
	}
	if IsPublicIP(netip.Addr{}) {
		t.Fatal("the zero Addr must not be public")
	}
}

func TestCheckURLAddresses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range addressCases {
		t.Run(tc.addr, func(t *testing.T) {
			res := deliverytest.Resolver{"hooks.example": {tc.addr}}
			literal := "https://" + net.JoinHostPort(tc.addr, "443") + "/hook"
			for _, raw := range []string{"https://hooks.example/hook", literal} {
				err := CheckURL(ctx, raw, false, res)
				if tc.public {
					if err != nil {
						t.Fatalf("CheckURL(%s) = %v, want nil", raw, err)
					}
					continue
				}
				if !errors.Is(err, ErrForbiddenAddress) {
					t.Fatalf("CheckURL(%s) = %v, want ErrForbiddenAddress", raw, err)
				}
				// A resolver's answer cannot tell ::ffff:a.b.c.d from a.b.c.d (net.IP stores IPv4
				// in the mapped form), so the name path reports the plain IPv4 kind.
				kind := strings.TrimSuffix(tc.kind, " (IPv4-mapped)")
				if !strings.HasPrefix(err.Error(), "url resolves to a") || !strings.Contains(err.Error(), kind) {
					t.Fatalf("CheckURL(%s) message = %q", raw, err)
				}
				// The escape hatch for self-hosted setups lifts the address rule.
				if err := CheckURL(ctx, raw, true, res); err != nil {
					t.Fatalf("CheckURL(%s, allowPrivate) = %v, want nil", raw, err)
				}
			}
		})
	}
}

func TestCheckURLRules(t *testing.T) {
	res := deliverytest.Resolver{
		"public.example":  {"93.184.216.34"},
		"private.example": {"10.0.0.5"},
		"mixed.example":   {"93.184.216.34", "10.0.0.5"},
		"mixed6.example":  {"2606:4700:4700::1111", "::1"},
	}
	cases := []struct {
		url          string
		allowPrivate bool
		want         string // "" for accepted
	}{
		{"https://public.example/hook", false, ""},
		{"https://public.example:8443/hook?x=1", false, ""},
		{"https://private.example/hook", false, "url resolves to a private address (10.0.0.5)"},
		{"https://mixed.example/hook", false, "url resolves to a private address (10.0.0.5)"},
		{"https://mixed6.example/hook", false, "url resolves to a loopback address (::1)"},
		{"https://private.example/hook", true, ""},
		{"http://public.example/hook", false, "url must use https"},
		{"http://private.example/hook", true, "url must use https"},
		{"ftp://public.example/", false, "url must use https"},
		{"public.example/hook", false, "url must use https"},
		{"https://user:pw@public.example/hook", false, "url must not contain a user name or password"},
		{"https:///hook", false, "url must have a host"},
		{"https://public.example:0/", false, "url has an invalid port"},
		{"https://public.example:99999/", false, "url has an invalid port"},
		{"https://nowhere.example/", false, "url host could not be resolved (nowhere.example)"},
		{"https://nowhere.example/", true, "url host could not be resolved (nowhere.example)"},
		{"https://[::ffff:127.0.0.1]/", false, "url resolves to a loopback (IPv4-mapped) address (::ffff:127.0.0.1)"},
		{"https://169.254.169.254/latest/meta-data", false, "url resolves to a link-local address (169.254.169.254)"},
		{"https://%zz/", false, "url is not a valid URL"},
	}
	for _, tc := range cases {
		err := CheckURL(context.Background(), tc.url, tc.allowPrivate, res)
		got := ""
		if err != nil {
			got = err.Error()
			var ue *URLError
			if !errors.As(err, &ue) {
				t.Errorf("CheckURL(%s) error %T is not a *URLError", tc.url, err)
			}
		}
		if got != tc.want {
			t.Errorf("CheckURL(%q, %v) = %q, want %q", tc.url, tc.allowPrivate, got, tc.want)
		}
	}
	if err := CheckURL(context.Background(), "http://x.example/", false, res); !errors.Is(err, ErrNotHTTPS) {
		t.Errorf("http url error = %v, want ErrNotHTTPS", err)
	}
}
