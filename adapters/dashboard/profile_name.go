package dashboard

import (
	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
)

// updateName renames the signed-in person; an invalid name comes back with the message next
// to the field.
func (h *Handler) updateName(c *gin.Context) {
	name := c.PostForm("name")
	_, err := h.app.Commands.UpdateProfile.Handle(c.Request.Context(), accounts.UpdateProfile{Name: &name})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		v := &view{Title: "Profile", Data: h.profileData(c), Form: map[string]string{"name": name}}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"name": "name"})
		h.render(c, b.Status, "profile", v)
		return
	}
	h.redirect(c, "/app/settings/profile", "Name saved.")
}
