package httpkit

// maxIDLength is far above any ID the server makes (a short prefix, "_" and 29 characters).
const maxIDLength = 64

// WellFormedID reports whether s could be an ID the server made: 1 to 64 ASCII letters,
// digits, underscores or hyphens. Anything else names no resource, so it is answered with 404
// before storage sees it (PostgreSQL refuses NUL and invalid UTF-8 in a query outright).
func WellFormedID(s string) bool {
	if s == "" || len(s) > maxIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}
