package dashboard

import "testing"

// TestSafeNext: only the dashboard's own pages are destinations after sign-in; the sign-in
// page itself is not (it would send a signed-in browser round in circles).
func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/app/settings/members":          "/app/settings/members",
		"/app/invitations/abc?x=1":       "/app/invitations/abc?x=1",
		"/app":                           "/app",
		"":                               "/app",
		"https://evil.example/app":       "/app",
		"//evil.example/app":             "/app",
		"/apple":                         "/app",
		"/app/login?next=%2Fapp%2Fforms": "/app",
		"/app/logout":                    "/app",
		"/app/\\evil":                    "/app",
		"/v1/forms":                      "/app",
		"/app/forms\r\nSet-Cookie: x=1":  "/app",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
