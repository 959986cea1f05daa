package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain/timezone"
)

// Times on the pages are shown in the viewer's time zone: the one kept on their profile, else
// their workspace's, else UTC; the UTC time shows on hover.

// zone is the time zone the signed-in viewer reads times in; UTC when nobody is signed in.
func (h *Handler) zone(c *gin.Context) *time.Location {
	sp, ok := sessionOf(c)
	if !ok {
		return time.UTC
	}
	if u := sp.User; u != nil && u.TimeZone() != "" {
		return timezone.Location(u.TimeZone())
	}
	return timezone.Location(workspaceZone(sp))
}

// workspaceZone is the time zone of the viewer's current workspace; UTC without one.
func workspaceZone(sp accounts.SessionPrincipal) string {
	for _, w := range sp.Workspaces {
		if w.Workspace != nil && w.Workspace.ID() == sp.Principal.WorkspaceID {
			return w.Workspace.TimeZone()
		}
	}
	return timezone.UTC
}

// updateTimeZone keeps the zone the person reads times in on their profile; the empty choice
// goes back to the workspace's. An unknown zone comes back with the message next to the select.
func (h *Handler) updateTimeZone(c *gin.Context) {
	zone := strings.TrimSpace(c.PostForm("time_zone"))
	if _, err := h.app.Commands.UpdateProfile.Handle(c.Request.Context(), accounts.UpdateProfile{TimeZone: &zone}); err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		d := h.profileData(c)
		d.ZoneChoice, d.Zones = zone, h.zoneOptions(zone)
		v := &view{Title: "Profile", Data: d}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"time_zone": "time_zone"})
		h.render(c, b.Status, "profile", v)
		return
	}
	notice := "Time zone saved: times are shown in " + zone + "."
	if zone == "" {
		notice = "Time zone saved: times follow the workspace's time zone."
	}
	h.redirect(c, "/app/settings/profile", notice)
}

// zoneOptions are the choices of a time zone select with current selected, each with its
// offset from UTC at the moment; a stored name the list does not offer (an old alias set
// through the API) is offered too, so it stays chosen.
func (h *Handler) zoneOptions(current string) []selectOption {
	return zoneOptionsAt(current, h.now())
}

func zoneOptionsAt(current string, now time.Time) []selectOption {
	names := timezone.Names()
	out := make([]selectOption, 0, len(names)+1)
	found := current == ""
	for _, n := range names {
		sel := n == current
		found = found || sel
		out = append(out, selectOption{Value: n, Label: zoneLabel(n, now), Selected: sel})
	}
	if !found {
		out = append(out, selectOption{Value: current, Label: zoneLabel(current, now), Selected: true})
	}
	return out
}

// zoneLabel reads a zone name with spaces and its offset from UTC at now:
// "America/Argentina/Buenos_Aires" is "America/Argentina/Buenos Aires (UTC−03:00)".
func zoneLabel(name string, now time.Time) string {
	if name == timezone.UTC {
		return name
	}
	_, offset := now.In(timezone.Location(name)).Zone()
	sign := "+"
	if offset < 0 {
		sign, offset = "−", -offset
	}
	return fmt.Sprintf("%s (UTC%s%02d:%02d)", strings.ReplaceAll(name, "_", " "), sign, offset/3600, offset%3600/60)
}
