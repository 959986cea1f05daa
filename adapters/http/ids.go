package httpapi

import (
	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/domain"
)

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

// wellFormedIDs answers 404 not_found for a request whose path carries a malformed ID.
func wellFormedIDs(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		for _, p := range c.Params {
			if !WellFormedID(p.Value) {
				fail(c, log, domain.ErrNotFound)
				return
			}
		}
		c.Next()
	}
}

// printableASCII reports whether s is made of visible ASCII characters and spaces only, as an
// Idempotency-Key must be (HTTP lets other bytes through in header values; storage must not).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
