package web

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// A form's theme reaches its page without inline styles (the CSP allows style-src 'self'
// only): the appearance is a class on <html> that form.css styles, the accent a small
// stylesheet of the form's own (/f/{id}/theme.css?v=…) setting form.css's custom properties,
// and the logo an image served from /f/{id}/logo/{version}.

// themeCSSVersion changes when the stylesheet's text changes for the same accent.
const themeCSSVersion = "1-"

// themeView is what the page's <head> and card draw of the theme.
type themeView struct {
	// Class is <html>'s class: "" (light, the page as it always looked), theme-dark or theme-auto.
	Class string
	// CSS is the URL of the form's theme stylesheet; empty without an accent.
	CSS string
	// Logo is the URL of the logo image, with its size in pixels; empty without one.
	Logo                  string
	LogoWidth, LogoHeight int
}

// themeOf builds the page's theme from the form's settings.
func themeOf(formID string, t form.Theme) themeView {
	var v themeView
	switch t.Appearance {
	case form.AppearanceDark:
		v.Class = "theme-dark"
	case form.AppearanceAuto:
		v.Class = "theme-auto"
	}
	if t.Accent != nil {
		if c, ok := form.ParseColor(*t.Accent); ok {
			v.CSS = httpkit.FormThemePath(formID, themeCSSVersion+c[1:])
		}
	}
	if l := t.Logo; l != nil {
		v.Logo, v.LogoWidth, v.LogoHeight = httpkit.FormLogoPath(formID, l.Version), l.Width, l.Height
	}
	return v
}

// themeCSS is the stylesheet of an accent (as ParseColor returns it): the accent, its button
// label (the colour the domain's contrast check chose) and a secondary button whose text is
// the page's text, since the accent is only checked at 3:1 against the page.
func themeCSS(accent string) string {
	return ":root,html.theme-dark,html.theme-auto{--fw-accent:" + accent + ";--fw-accent-hover:" + accent +
		";--fw-on-accent:" + form.AccentLabel(accent) + ";--fw-secondary-text:var(--fw-text)}\n" +
		"button:hover{text-decoration:underline}\n"
}

// themeStylesheet serves GET /f/{id}/theme.css: the form's accent stylesheet, cached for good
// when v is the current version (a new accent has a new URL).
func (h *Handler) themeStylesheet(c *gin.Context) {
	id := c.Param("form_id")
	if !httpkit.WellFormedID(id) {
		c.Status(http.StatusNotFound)
		return
	}
	f, err := h.d.App.Queries.GetPublicForm.Handle(c.Request.Context(), capture.GetPublicForm{ID: id})
	if err != nil {
		h.assetFailed(c, err)
		return
	}
	t := f.Settings().Theme
	if t.Accent == nil {
		c.Status(http.StatusNotFound)
		return
	}
	accent, ok := form.ParseColor(*t.Accent)
	if !ok {
		c.Status(http.StatusNotFound)
		return
	}
	hd := c.Writer.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	if c.Query("v") == themeCSSVersion+accent[1:] {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	c.Data(http.StatusOK, "text/css; charset=utf-8", []byte(themeCSS(accent)))
}

// logo serves GET /f/{id}/logo/{version}: the image with the type detected at upload, cached
// for good (the version is a digest of the image); another version is not found.
func (h *Handler) logo(c *gin.Context) {
	id := c.Param("form_id")
	if !httpkit.WellFormedID(id) {
		c.Status(http.StatusNotFound)
		return
	}
	l, err := h.d.App.Queries.GetFormLogo.Handle(c.Request.Context(), forms.GetFormLogo{FormID: id, Version: c.Param("version")})
	if err != nil {
		h.assetFailed(c, err)
		return
	}
	defer l.Body.Close()
	hd := c.Writer.Header()
	hd.Set("Content-Type", l.Logo.ContentType)
	hd.Set("Content-Length", strconv.FormatInt(l.Logo.Size, 10))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Content-Disposition", "inline")
	c.Status(http.StatusOK)
	if _, err := io.Copy(c.Writer, l.Body); err != nil && !strings.Contains(err.Error(), "broken pipe") {
		h.d.Logger.Warn("serve form logo", zap.Error(err))
	}
}

// assetFailed answers a theme file that could not be served: 404 for what does not exist, the
// shared table's status (503 with Retry-After for storage trouble) otherwise, without a body.
func (h *Handler) assetFailed(c *gin.Context, err error) {
	b := httperr.Problem(err)
	if b.Status >= 500 {
		h.d.Logger.Error("serve form theme", zap.Error(err))
	}
	httperr.SetRetryAfter(c, b)
	c.Header("Cache-Control", "no-store")
	c.Status(b.Status)
}
