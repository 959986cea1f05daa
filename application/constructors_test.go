package application_test

import (
	"reflect"
	"testing"

	"github.com/formward/formward/application"
)

// Each handler holds the ports and settings it needs, named by its constructor; none keeps the
// whole Deps or Settings, so a reader sees at the constructor what a use case touches.
func TestHandlersHoldNoDepsOrSettings(t *testing.T) {
	banned := map[reflect.Type]bool{
		reflect.TypeOf(application.Deps{}):     true,
		reflect.TypeOf(application.Settings{}): true,
	}
	var walk func(path string, typ reflect.Type, seen map[reflect.Type]bool)
	walk = func(path string, typ reflect.Type, seen map[reflect.Type]bool) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if banned[typ] {
			t.Errorf("%s holds a whole %s; give it only the ports and values it needs", path, typ.Name())
			return
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			walk(path+"."+f.Name, f.Type, seen)
		}
	}
	app := reflect.TypeOf(application.Application{})
	n := 0
	for _, group := range []string{"Commands", "Queries"} {
		g, _ := app.FieldByName(group)
		for i := 0; i < g.Type.NumField(); i++ {
			h := g.Type.Field(i)
			walk(group+"."+h.Name, h.Type, map[reflect.Type]bool{})
			n++
		}
	}
	if n < 30 {
		t.Fatalf("walked %d handlers; the Application's groups moved?", n)
	}
}
