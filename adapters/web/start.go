package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/spam"
)

// maxStartBytes bounds the start beacon's body (a render token, urlencoded).
const maxStartBytes = 4 << 10

// start counts a respondent's first interaction with a rendered page: the page's script sends
// its render token (and on a multi-page form its page, counted as reached) with
// navigator.sendBeacon (no cookie, nothing awaited). It answers 204
// whether or not this page's start was counted before, 400 without a valid token of this
// form, 429 over the public rate limit. Nothing of the request is stored.
func (h *Handler) start(c *gin.Context) {
	id := c.Param("form_id")
	c.Header("Cache-Control", "no-store")
	if !httpkit.WellFormedID(id) {
		c.Status(http.StatusNotFound)
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxStartBytes)
	token := c.PostForm("_token")
	page, _ := strconv.Atoi(c.PostForm("_page")) // a multi-page form's page; anything else is no page
	_, err := h.starts.Handle(c.Request.Context(), capture.RecordFormStart{
		FormID: id, Token: token, IP: httpkit.ClientIP(c.Request, h.opts.TrustedProxies), Page: page,
	})
	var rl *spam.RateLimited
	switch {
	case errors.As(err, &rl):
		h.jsonFail(c, err)
	case err != nil:
		c.Status(http.StatusBadRequest)
	default:
		c.Status(http.StatusNoContent)
	}
}
