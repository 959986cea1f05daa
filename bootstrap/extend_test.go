package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/objectstore/storetest"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// What an extension registers in these tests, as a custom build's package would.
var testStores = struct {
	sync.Mutex
	last *memoryStore
}{}

func init() {
	extend.RegisterObjectStore("test-memory", func(_ context.Context, d extend.ObjectStoreDeps) (ports.ObjectStore, error) {
		if d.DataDir == "" || d.Logger == nil || d.Getenv == nil {
			return nil, fmt.Errorf("incomplete deps %+v", d)
		}
		s := newMemoryStore()
		testStores.Lock()
		testStores.last = s
		testStores.Unlock()
		return s, nil
	})
	extend.RegisterCaptcha("test_captcha", extend.Captcha{
		Script: "https://captcha.example/api.js", Origins: []string{"https://captcha.example"},
		Class: "x-captcha", Response: "x-captcha-response",
		Verifier: func(d extend.CaptchaDeps) (ports.Captcha, error) {
			if d.Getenv("FORMWARD_ACME_TOKEN") == "refuse" {
				return nil, errors.New("FORMWARD_ACME_TOKEN refused")
			}
			return testCaptcha{}, nil
		},
	})
	extend.DeclareVariables("FORMWARD_ACME_TOKEN")
	extend.RegisterAction("test_noop", func(d extend.ActionDeps) (ports.ActionRunner, error) {
		switch d.Getenv("FORMWARD_ACME_TOKEN") {
		case "refuse":
			return nil, errors.New("FORMWARD_ACME_TOKEN refused")
		case "misnamed":
			return noopAction{typ: "other_type", deps: d}, nil
		}
		testActions.Lock()
		testActions.deps = d
		testActions.Unlock()
		return noopAction{typ: "test_noop", deps: d}, nil
	})
}

// testActions keeps the deps test_noop was last built with.
var testActions = struct {
	sync.Mutex
	deps extend.ActionDeps
}{}

// noopAction is an extension's action type; it keeps the deps it was built with.
type noopAction struct {
	typ  string
	deps extend.ActionDeps
}

func (a noopAction) Type() string                                  { return a.typ }
func (noopAction) Validate(map[string]any) []ports.ConfigViolation { return nil }
func (noopAction) Integration() string                             { return "" }
func (noopAction) Run(context.Context, ports.ActionInput) ports.ActionOutcome {
	return ports.ActionOutcome{}
}

type testCaptcha struct{}

func (testCaptcha) Verify(context.Context, *form.Captcha, string, string) error { return nil }

// memoryStore is an extension's object store: bytes in memory, keys checked as the contract
// wants; broken makes every call fail.
type memoryStore struct {
	mu      sync.Mutex
	objects map[string]memoryObject
	broken  bool
}

type memoryObject struct {
	data        []byte
	contentType string
	at          time.Time
}

func newMemoryStore() *memoryStore { return &memoryStore{objects: map[string]memoryObject{}} }

// errBroken is an I/O error: what the guard recognises as the storage failing.
var errBroken = fmt.Errorf("memory store: %w", syscall.EIO)

func (s *memoryStore) Put(_ context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := objectstore.ValidateKey(key); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return err
	}
	if int64(len(b)) != size {
		return fmt.Errorf("put %s: %d bytes, declared %d", key, len(b), size)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return errBroken
	}
	s.objects[key] = memoryObject{data: b, contentType: contentType, at: time.Now()}
	return nil
}

func (s *memoryStore) Get(_ context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	if err := objectstore.ValidateKey(key); err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return nil, ports.ObjectInfo{}, errBroken
	}
	o, ok := s.objects[key]
	if !ok {
		return nil, ports.ObjectInfo{}, domain.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(o.data)), ports.ObjectInfo{Size: int64(len(o.data)), ContentType: o.contentType, ModTime: o.at}, nil
}

func (s *memoryStore) Delete(_ context.Context, key string) error {
	if err := objectstore.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, key)
	return nil
}

func (s *memoryStore) DeletePrefix(_ context.Context, prefix string) error {
	if err := objectstore.ValidatePrefix(prefix); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			delete(s.objects, k)
		}
	}
	return nil
}

func (s *memoryStore) Usage(_ context.Context, prefix string) (int64, error) {
	if err := objectstore.ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return 0, errBroken
	}
	var n int64
	for k, o := range s.objects {
		if strings.HasPrefix(k, prefix) {
			n += int64(len(o.data))
		}
	}
	return n, nil
}

// The store an extension registers passes the same contract as Formward's own.
func TestExtensionStorePassesTheContract(t *testing.T) {
	storetest.Run(t, newMemoryStore(), storetest.Contract{})
}

// FORMWARD_OBJECT_STORE picks a registered store, which Formward encrypts and whose failures
// it reports as unavailability, as it does with local and S3.
func TestRegisteredObjectStoreIsEncryptedAndGuarded(t *testing.T) {
	rt, cleanup := testRuntime(t, testConfig(t, "--object-store", "test-memory"))
	defer cleanup()
	testStores.Lock()
	raw := testStores.last
	testStores.Unlock()
	if raw == nil {
		t.Fatal("the registered store was not opened")
	}
	ctx := context.Background()
	key := "workspaces/wsp_1/forms/frm_1/k1/letter.txt"
	secret := "a secret letter, stored encrypted"
	if err := rt.Files.Put(ctx, key, strings.NewReader(secret), int64(len(secret)), "text/plain"); err != nil {
		t.Fatal(err)
	}
	raw.mu.Lock()
	for k, o := range raw.objects {
		if bytes.Contains(o.data, []byte(secret)) || strings.Contains(k, "letter") {
			t.Errorf("the store holds %s in plaintext", k)
		}
	}
	n := len(raw.objects)
	raw.mu.Unlock()
	if n == 0 {
		t.Fatal("nothing reached the registered store")
	}
	rc, _, err := rt.Files.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if string(got) != secret {
		t.Fatalf("read back %q", got)
	}
	raw.mu.Lock()
	raw.broken = true
	raw.mu.Unlock()
	if _, err := rt.Files.Usage(ctx, "workspaces/wsp_1/"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("a failing store: %v, want domain.ErrUnavailable", err)
	}
}

// A store nobody registered stops the start, naming the ones there are.
func TestUnknownObjectStoreStopsTheStart(t *testing.T) {
	_, cleanup, err := newRuntime(context.Background(), testConfig(t, "--object-store", "nfs"), zap.NewNop())
	if err == nil {
		cleanup()
		t.Fatal("an unknown object store started")
	}
	for _, want := range []string{"FORMWARD_OBJECT_STORE", `"nfs"`, "local", "s3", "test-memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestObjectStoreDefault(t *testing.T) {
	for _, tc := range []struct {
		cfg  FilesConfig
		want string
	}{
		{FilesConfig{}, "local"},
		{FilesConfig{S3Endpoint: "minio:9000"}, "s3"},
		{FilesConfig{S3Endpoint: "minio:9000", ObjectStore: "local"}, "local"},
		{FilesConfig{ObjectStore: "test-memory"}, "test-memory"},
	} {
		if got := objectStoreName(Config{FilesConfig: tc.cfg}); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.cfg, got, tc.want)
		}
	}
}

// A registered captcha provider is one forms may name, and the public page gets its widget;
// the built-in ones read their settings through the same Getenv.
func TestRegisteredCaptchaProviders(t *testing.T) {
	t.Setenv("FORMWARD_ACME_TOKEN", "token")
	cfg := testConfig(t, "--turnstile-verify-url", "https://turnstile.proxy.example/siteverify")
	s, err := provideSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []form.CaptchaProvider{form.CaptchaTurnstile, form.CaptchaHCaptcha, form.CaptchaReCAPTCHA, "test_captcha"}; !slices.Equal(s.FormLimits.CaptchaProviders, want) {
		t.Errorf("forms may name %v, want %v", s.FormLimits.CaptchaProviders, want)
	}
	captchas, err := provideCaptchas(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if c := captchas["test_captcha"]; c.Class != "x-captcha" || c.Response != "x-captcha-response" || c.Verifier == nil {
		t.Errorf("test_captcha: %+v", c)
	}
	if v, ok := captchas[form.CaptchaTurnstile].Verifier.(web.SiteVerify); !ok || v.URL != "https://turnstile.proxy.example/siteverify" {
		t.Errorf("turnstile verifier %+v", captchas[form.CaptchaTurnstile].Verifier)
	}
	if v, ok := captchas[form.CaptchaHCaptcha].Verifier.(web.SiteVerify); !ok || v.URL != web.DefaultCaptchaVerifyURLs[form.CaptchaHCaptcha] {
		t.Errorf("hcaptcha verifier %+v", captchas[form.CaptchaHCaptcha].Verifier)
	}
	t.Setenv("FORMWARD_ACME_TOKEN", "refuse")
	if _, err := provideCaptchas(cfg, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "test_captcha") {
		t.Fatalf("a verifier that cannot be built: %v", err)
	}
}

// Getenv reads a setting as the command resolved it (flag over environment over default),
// an extension's own variable from the environment, and nothing outside FORMWARD_.
func TestConfigGetenv(t *testing.T) {
	t.Setenv("FORMWARD_SMTP_FROM", "env@example.com")
	t.Setenv("FORMWARD_ACME_TOKEN", "acme")
	t.Setenv("HOME_FOR_TEST", "x")
	cfg := testConfig(t, "--smtp-from", "flag@example.com", "--public-url", "https://forms.example.com")
	for name, want := range map[string]string{
		"FORMWARD_SMTP_FROM":        "flag@example.com",
		"FORMWARD_PUBLIC_URL":       "https://forms.example.com",
		"FORMWARD_DELIVERY_TIMEOUT": "10s",
		"FORMWARD_ACME_TOKEN":       "acme",
		"HOME_FOR_TEST":             "",
	} {
		if got := cfg.Getenv(name); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, want)
		}
	}
	cfg.SMTPFrom = "changed@example.com" // a Config changed after it was read builds what it says
	if got := cfg.Getenv("FORMWARD_SMTP_FROM"); got != "changed@example.com" {
		t.Errorf("after a change: %q", got)
	}
}

// An extension's declared variables are known: no warning about them.
func TestDeclaredVariablesAreKnown(t *testing.T) {
	got := unknownVariables([]string{"FORMWARD_ACME_TOKEN=x", "FORMWARD_ACME_TOKN=y"}, knownVariables(t))
	if len(got) != 1 || got[0].name != "FORMWARD_ACME_TOKN" || got[0].closest != "FORMWARD_ACME_TOKEN" {
		t.Fatalf("unknown %+v", got)
	}
}

// A registered action type is built with what Formward's own are built from, and a factory
// that fails, or builds a runner of another type, stops the start naming the type.
func TestRegisteredActionIsBuiltLikeTheOthers(t *testing.T) {
	caFile := actiontest.NewCA(t).File
	cfg := testConfig(t, "--breaker-failures", "7", "--breaker-cooldown", "45s", "--delivery-timeout", "3s", "--webhook-ca-file", caFile)
	runners, err := provideActionRunners(cfg, nopSender{}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := runners["test_noop"]
	if !ok || r.Type() != "test_noop" {
		t.Fatalf("runners %v", runners)
	}
	if _, traced := r.(noopAction); traced {
		t.Error("the extension's runner is not wrapped for tracing like the others")
	}
	testActions.Lock()
	got := testActions.deps
	testActions.Unlock()
	if got.Sender == nil || got.Timeout != 3*time.Second || got.CAFile != caFile ||
		got.Breaker.Failures != 7 || got.Breaker.Cooldown != 45*time.Second || got.Logger == nil || got.Getenv == nil {
		t.Errorf("deps %+v", got)
	}
	for token, want := range map[string]string{"refuse": "test_noop: FORMWARD_ACME_TOKEN refused", "misnamed": `action type test_noop: its runner says it is "other_type"`} {
		t.Setenv("FORMWARD_ACME_TOKEN", token)
		if _, err := provideActionRunners(cfg, nopSender{}, nil, zap.NewNop()); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", token, err, want)
		}
	}
}
