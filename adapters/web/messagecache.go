package web

import (
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// Message pages (the thank-you page, closed and error pages) are the same for every post that
// gets them: each is rendered once and kept, keyed by every input of its template. A thank-you
// message that recalls answers or a score is never kept: it holds one respondent's answers.

// messageCacheMax bounds the kept pages; the map is cleared when it is full.
const messageCacheMax = 1024

type messageCache struct {
	mu    sync.RWMutex
	pages map[string][]byte
}

// messageKey writes every template input of mp into fp, unambiguously; false for a page whose
// language view carries more than its tag and direction (not kept).
func messageKey(fp *fingerprint, mp *messagePage) bool {
	fp.b = fp.b[:0]
	fp.str(mp.Title, mp.Heading, mp.Message, mp.Note, mp.Again)
	fp.flag(mp.Lang != nil)
	if l := mp.Lang; l != nil {
		if len(l.Others) > 0 || l.Buttons || l.Label != "" || l.MsgRequired != "" || l.MsgEmail != "" || l.MsgNumber != "" ||
			l.MsgInvalid != "" || l.MsgSending != "" {
			return false
		}
		fp.str(l.Tag, l.Dir)
	}
	fp.str(mp.Theme.Class, mp.Theme.CSS, mp.Theme.Logo)
	fp.num(mp.Theme.LogoWidth, mp.Theme.LogoHeight)
	return true
}

// renderMessage answers the message page mp in status, from the cache when keep is set.
func (h *Handler) renderMessage(c *gin.Context, status int, mp messagePage, keep bool) {
	if !keep {
		h.render(c, status, "message.html", mp)
		return
	}
	fp := fingerprints.Get().(*fingerprint)
	defer fingerprints.Put(fp)
	if !messageKey(fp, &mp) {
		h.render(c, status, "message.html", mp)
		return
	}
	mc := &h.messages
	mc.mu.RLock()
	page, ok := mc.pages[string(fp.b)]
	mc.mu.RUnlock()
	if !ok {
		b := viewBufs.Get().(*viewBuf)
		defer viewBufs.Put(b)
		b.out.Reset()
		if err := h.tmpl.ExecuteTemplate(&b.out, "message.html", mp); err != nil {
			h.d.Logger.Error("render public form", zap.String("template", "message.html"), zap.Error(err))
			c.Status(http.StatusInternalServerError)
			return
		}
		page = append([]byte(nil), b.out.Bytes()...)
		mc.mu.Lock()
		if len(mc.pages) >= messageCacheMax || mc.pages == nil {
			mc.pages = make(map[string][]byte)
		}
		mc.pages[string(fp.b)] = page
		mc.mu.Unlock()
	}
	c.Data(status, "text/html; charset=utf-8", page)
}
