package extend_test

import (
	"context"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/ports"
)

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one saying %q", want)
		}
		if msg, _ := r.(string); !strings.Contains(msg, want) {
			t.Fatalf("panic %v, want one saying %q", r, want)
		}
	}()
	f()
}

func TestRegisterAction(t *testing.T) {
	factory := func(extend.ActionDeps) (ports.ActionRunner, error) { return nil, nil }
	extend.RegisterAction("test_registered_action", factory)
	if _, ok := extend.Actions()["test_registered_action"]; !ok {
		t.Fatal("the registered action is not listed")
	}
	mustPanic(t, "registered twice", func() { extend.RegisterAction("test_registered_action", factory) })
	mustPanic(t, "empty", func() { extend.RegisterAction("", factory) })
	mustPanic(t, "empty or padded", func() { extend.RegisterAction(" test_padded", factory) })
	mustPanic(t, "incomplete", func() { extend.RegisterAction("test_nil_action", nil) })
	// A copy: changing it changes nothing registered.
	delete(extend.Actions(), "test_registered_action")
	if _, ok := extend.Actions()["test_registered_action"]; !ok {
		t.Fatal("Actions handed out the registry itself")
	}
}

func TestObjectStoreLookup(t *testing.T) {
	open := func(context.Context, extend.ObjectStoreDeps) (ports.ObjectStore, error) { return nil, nil }
	extend.RegisterObjectStore("test-store-a", open)
	if _, err := extend.ObjectStore("test-store-a"); err != nil {
		t.Fatal(err)
	}
	_, err := extend.ObjectStore("test-store-missing")
	if err == nil || !strings.Contains(err.Error(), `"test-store-missing"`) || !strings.Contains(err.Error(), "test-store-a") {
		t.Fatalf("unknown store: %v, want an error naming it and the stores there are", err)
	}
	mustPanic(t, "registered twice", func() { extend.RegisterObjectStore("test-store-a", open) })
}

func TestRegisterCaptcha(t *testing.T) {
	c := extend.Captcha{
		Script: "https://captcha.example/api.js", Origins: []string{"https://captcha.example"}, Class: "x-captcha", Response: "x-captcha-response",
		Verifier: func(extend.CaptchaDeps) (ports.Captcha, error) { return nil, nil },
	}
	extend.RegisterCaptcha("test_captcha", c)
	c.Origins[0] = "https://changed.example"
	if got := extend.Captchas()["test_captcha"]; got.Response != "x-captcha-response" || got.Origins[0] != "https://captcha.example" {
		t.Fatalf("registered %+v", got)
	}
	mustPanic(t, "registered twice", func() { extend.RegisterCaptcha("test_captcha", c) })
	incomplete := c
	incomplete.Response = ""
	mustPanic(t, "incomplete", func() { extend.RegisterCaptcha("test_captcha_2", incomplete) })
}

func TestDeclareVariables(t *testing.T) {
	extend.DeclareVariables("FORMWARD_TEST_EXTENSION_TOKEN")
	found := false
	for _, v := range extend.Variables() {
		found = found || v == "FORMWARD_TEST_EXTENSION_TOKEN"
	}
	if !found {
		t.Fatal("declared variable not listed")
	}
	mustPanic(t, "must start with FORMWARD_", func() { extend.DeclareVariables("HOME") })
}
