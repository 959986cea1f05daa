package persistence_test

import (
	"context"
	"testing"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

func TestFormThemeRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		plain, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if th := plain.Settings().Theme; th.Accent != nil || th.Appearance != form.AppearanceLight || th.Logo != nil {
			t.Fatalf("a form without a theme reads %+v", th)
		}
		accent := "#2563EB"
		logo := form.Logo{Key: "workspaces/w/forms/f/theme/logo-abc", ContentType: "image/png", Size: 68, Width: 1, Height: 1, Version: "abc"}
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			s := f.Settings()
			s.Theme.Accent, s.Theme.Appearance = &accent, form.AppearanceAuto
			if _, err := f.Apply(form.Patch{Settings: &s}, nil, form.DefaultLimits, base); err != nil {
				return ports.Effects{}, err
			}
			_, err := f.SetLogo(&logo, base)
			return ports.Effects{}, err
		})
		noErr(t, err)
		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		th := got.Settings().Theme
		if th.Accent == nil || *th.Accent != "#2563eb" || th.Appearance != form.AppearanceAuto || th.Logo == nil || *th.Logo != logo {
			t.Fatalf("read back %+v (logo %+v)", th, th.Logo)
		}
	})
}
