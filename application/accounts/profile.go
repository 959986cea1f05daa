package accounts

import (
	"context"
	"fmt"

	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// UpdateProfile changes the signed-in user's own profile: the display name and the time zone
// they read times in; nil fields stay as they are.
type UpdateProfile struct {
	Name *string
	// TimeZone is an IANA name; "" clears it, so times follow the workspace's zone.
	TimeZone *string
}

// UpdateProfileHandler updates profiles.
type UpdateProfileHandler struct {
	users ports.UserRepository
}

// NewUpdateProfileHandler makes the command.
func NewUpdateProfileHandler(users ports.UserRepository) UpdateProfileHandler {
	return UpdateProfileHandler{users: users}
}

// Handle renames the signed-in user (trimmed; at most 200 characters, no control characters;
// empty shows the email address instead), sets their time zone, and returns the user as stored.
func (h UpdateProfileHandler) Handle(ctx context.Context, cmd UpdateProfile) (*user.User, error) {
	p, err := signedInUser(ctx)
	if err != nil {
		return nil, err
	}
	u, err := h.users.Update(ctx, p.Actor.ID, func(u *user.User) (ports.Effects, error) {
		if cmd.Name != nil {
			if err := u.Rename(*cmd.Name); err != nil {
				return ports.Effects{}, err
			}
		}
		if cmd.TimeZone != nil {
			return ports.Effects{}, u.ChooseTimeZone(*cmd.TimeZone)
		}
		return ports.Effects{}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("update profile: %w", err)
	}
	return u, nil
}
