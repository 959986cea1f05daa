// Package extend is how a Go module adds to Formward without forking it. A package registers
// workflow action types, object stores and captcha providers here, from its init() (or
// explicitly before the CLI runs), the way database/sql drivers register; a custom main.go
// that imports Formward's CLI and blank-imports that package builds a binary that has them
// (see examples/custom-build and docs/extending.md).
//
// Formward's own adapters register through the same functions (bootstrap/builtins.go), so a
// registered extension is built, wrapped and configured exactly like a built-in one.
//
// This package and the ports it names (ports.ActionRunner, ports.ObjectStore, ports.Captcha,
// ports.Sender) are the stable surface for extensions: they change only with a major version.
//
// Registration panics on a duplicate or empty name (a programming error, found at the first
// start); a name the configuration asks for that nobody registered is a startup error.
package extend

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/ports"
)

// Getenv reads a FORMWARD_ setting by its variable name, as the running command resolved it
// (flag, environment or default); "" for a name outside FORMWARD_. An extension's own
// variables must be declared with DeclareVariables.
type Getenv func(name string) string

// BreakerOptions configure the circuit breakers an action keeps, one per action ID: the
// operator's FORMWARD_BREAKER_FAILURES and FORMWARD_BREAKER_COOLDOWN.
type BreakerOptions struct {
	// Failures is how many consecutive failed attempts of one action open its breaker.
	Failures uint32
	// Cooldown is how long an open breaker refuses attempts before it lets one probe through.
	Cooldown time.Duration
	// Created, when set, is told of every breaker set an action makes (Formward counts their
	// states in its metrics). Pass it on unchanged.
	Created func(any)
}

// ActionDeps is what an action factory gets: what Formward's own action types are built from.
type ActionDeps struct {
	// Sender is the SSRF-safe outbound HTTPS client: HTTPS only, public addresses only
	// (checked at connect time), one circuit breaker per OutboundRequest.EndpointID. Every URL
	// a customer typed goes through it.
	Sender ports.Sender
	// CAFile is a PEM file of extra CA certificates (FORMWARD_WEBHOOK_CA_FILE) that a client
	// of an operator-configured API should trust besides the system ones.
	CAFile string
	// Timeout bounds one attempt (FORMWARD_DELIVERY_TIMEOUT).
	Timeout time.Duration
	// Breaker configures the action's own breakers, for calls that do not go through Sender.
	Breaker BreakerOptions
	// Getenv reads settings; see Getenv.
	Getenv Getenv
	// Logger is named after the action type.
	Logger *zap.Logger
}

// ActionFactory builds the runner of one action type, once per process start.
type ActionFactory func(ActionDeps) (ports.ActionRunner, error)

// ObjectStoreDeps is what an object store factory gets.
type ObjectStoreDeps struct {
	// DataDir is FORMWARD_DATA_DIR, where a store on local disk keeps its files.
	DataDir string
	Getenv  Getenv
	Logger  *zap.Logger
}

// ObjectStoreFactory opens the store of uploaded files. Formward encrypts what it stores in
// it and reports its failures as unavailability; the store keeps bytes only.
type ObjectStoreFactory func(ctx context.Context, d ObjectStoreDeps) (ports.ObjectStore, error)

// CaptchaDeps is what a captcha verifier factory gets.
type CaptchaDeps struct {
	Getenv Getenv
	Logger *zap.Logger
}

// Captcha is a captcha provider: how the public page shows its widget, and how the server
// checks the response the widget posts.
type Captcha struct {
	// Script is the URL of the widget's script (https).
	Script string
	// Origins are the origins the widget loads scripts and frames from; the page's
	// Content-Security-Policy allows them (script-src, frame-src).
	Origins []string
	// Class is the class of the element the script turns into the widget; the element carries
	// the form's site key as data-sitekey.
	Class string
	// Response is the name of the form field the widget posts its response in.
	Response string
	// Verifier builds the server-side check of a response, once per process start.
	Verifier func(CaptchaDeps) (ports.Captcha, error)
}

// registry holds what was registered; one per process, like database/sql's drivers.
var registry = struct {
	sync.Mutex
	actions   map[string]ActionFactory
	stores    map[string]ObjectStoreFactory
	captchas  map[string]Captcha
	variables map[string]bool
}{
	actions: map[string]ActionFactory{}, stores: map[string]ObjectStoreFactory{},
	captchas: map[string]Captcha{}, variables: map[string]bool{},
}

// RegisterAction adds the workflow action type name. name must be the runner's Type(): a
// snake_case identifier such as "teams_message".
func RegisterAction(name string, factory ActionFactory) {
	registry.Lock()
	defer registry.Unlock()
	mustBeNew("action type", name, factory == nil, registry.actions[name] != nil)
	registry.actions[name] = factory
}

// RegisterObjectStore adds the object store name, chosen with FORMWARD_OBJECT_STORE=name.
func RegisterObjectStore(name string, factory ObjectStoreFactory) {
	registry.Lock()
	defer registry.Unlock()
	mustBeNew("object store", name, factory == nil, registry.stores[name] != nil)
	registry.stores[name] = factory
}

// RegisterCaptcha adds the captcha provider name, which forms then accept as
// settings.spam.captcha.provider.
func RegisterCaptcha(name string, c Captcha) {
	registry.Lock()
	defer registry.Unlock()
	_, dup := registry.captchas[name]
	mustBeNew("captcha provider", name, c.Verifier == nil || c.Response == "" || c.Class == "" || c.Script == "", dup)
	c.Origins = append([]string(nil), c.Origins...)
	registry.captchas[name] = c
}

// DeclareVariables names the FORMWARD_ variables an extension reads with Getenv, so that
// Formward does not warn about them as unknown (misspelt) settings at start.
func DeclareVariables(names ...string) {
	registry.Lock()
	defer registry.Unlock()
	for _, n := range names {
		if !strings.HasPrefix(n, "FORMWARD_") {
			panic(fmt.Sprintf("extend: variable %q must start with FORMWARD_", n))
		}
		registry.variables[n] = true
	}
}

func mustBeNew(what, name string, incomplete, dup bool) {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		panic(fmt.Sprintf("extend: %s name %q is empty or padded", what, name))
	case incomplete:
		panic(fmt.Sprintf("extend: %s %q registered incomplete", what, name))
	case dup:
		panic(fmt.Sprintf("extend: %s %q registered twice", what, name))
	}
}

// Actions returns the registered action types, by name.
func Actions() map[string]ActionFactory {
	registry.Lock()
	defer registry.Unlock()
	return copyMap(registry.actions)
}

// ObjectStore returns the factory of the object store name, or an error naming the ones there are.
func ObjectStore(name string) (ObjectStoreFactory, error) {
	registry.Lock()
	defer registry.Unlock()
	f, ok := registry.stores[name]
	if !ok {
		return nil, fmt.Errorf("no object store %q in this build (there are: %s)", name, strings.Join(sortedKeys(registry.stores), ", "))
	}
	return f, nil
}

// ObjectStores returns the names of the registered object stores, sorted.
func ObjectStores() []string {
	registry.Lock()
	defer registry.Unlock()
	return sortedKeys(registry.stores)
}

// Captchas returns the registered captcha providers, by name.
func Captchas() map[string]Captcha {
	registry.Lock()
	defer registry.Unlock()
	return copyMap(registry.captchas)
}

// Variables returns the variables declared with DeclareVariables, sorted.
func Variables() []string {
	registry.Lock()
	defer registry.Unlock()
	return sortedKeys(registry.variables)
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
