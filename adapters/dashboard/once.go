package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
)

// A secret shown once (a new API key, an invitation link, recovery codes) is never drawn by the
// post that made it. The post keeps it in a one-time flash (application/accounts: sealed at
// rest, bound to the session and the page, deleted by its first read) and answers 303 to its
// page with ?shown=<flash ID>. That GET takes the flash and shows the secret; a reload finds
// the flash gone and says the secret was shown once instead. So neither a reload of the post
// (the browser repeats the GET) nor of the page makes or shows anything again.

// Kinds of flash, one per page that shows one.
const (
	onceAPIKey        = "api_key"
	onceInvitation    = "invitation"
	onceRecoveryCodes = "recovery_codes"
	// oncePrivacyErase is not a secret but a respondent's address, which goes in no URL.
	oncePrivacyErase = "privacy_erase"
)

// shownParam is the query parameter naming the flash a page shows.
const shownParam = "shown"

// showOnce keeps v for the page at path (kind names the page) and answers 303 to it, with a
// notice. It reports false when the flash could not be kept; the caller then draws the secret
// itself rather than lose it.
func (h *Handler) showOnce(c *gin.Context, path, kind, notice string, v any) bool {
	payload, err := json.Marshal(v)
	if err == nil {
		var id string
		id, err = h.app.Commands.KeepFlash.Handle(c.Request.Context(), accounts.KeepFlash{Kind: kind, Payload: payload})
		if err == nil {
			h.redirect(c, path+"?"+shownParam+"="+url.QueryEscape(id), notice)
			return true
		}
	}
	h.log.Error("keep a one-time flash", zap.String("kind", kind), zap.Error(err))
	return false
}

// onceState is what a page that shows a secret once knows about it.
type onceState int

const (
	// onceNone: the page was not reached after a post that made a secret.
	onceNone onceState = iota
	// onceShown: the secret was taken from its flash and is drawn now.
	onceShown
	// onceGone: the page names a flash that was taken already (a reload) or expired.
	onceGone
)

// takeOnce takes the flash the page's ?shown= names into v. The answer is never stored by a
// cache, with or without the secret.
func (h *Handler) takeOnce(c *gin.Context, kind string, v any) (onceState, error) {
	id, asked := c.GetQuery(shownParam)
	if !asked {
		return onceNone, nil
	}
	noStore(c)
	payload, err := h.app.Commands.TakeFlash.Handle(c.Request.Context(), accounts.TakeFlash{ID: id, Kind: kind})
	if errors.Is(err, domain.ErrNotFound) {
		return onceGone, nil
	}
	if err != nil {
		return onceNone, err
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return onceNone, err
	}
	return onceShown, nil
}

// renderSecret draws a page that shows a secret directly, when its flash could not be kept.
func (h *Handler) renderSecret(c *gin.Context, page string, v *view) {
	noStore(c)
	h.render(c, http.StatusCreated, page, v)
}
