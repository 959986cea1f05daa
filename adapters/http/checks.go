package httpapi

import (
	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/domain"
)

// wellFormedIDs answers 404 not_found for a request whose path carries a malformed ID.
func wellFormedIDs(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		for _, p := range c.Params {
			if !httpkit.WellFormedID(p.Value) {
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

// checkBodyUTF8 is CheckUTF8 as a 400 invalid_request of the API.
func checkBodyUTF8(body []byte) error {
	if err := httpkit.CheckUTF8(body); err != nil {
		return badRequest(err.Error())
	}
	return nil
}
