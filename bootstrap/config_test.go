package bootstrap

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestEveryFlagHasAnEnvironmentVariable(t *testing.T) {
	t.Setenv("FORMWARD_HTTP_ADDR", "127.0.0.1:9999")
	t.Setenv("FORMWARD_SHUTDOWN_TIMEOUT", "3s")
	t.Setenv("FORMWARD_MASTER_KEY", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=")
	var out bytes.Buffer
	root := newRootCommand(&out, &out)
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.ParseFlags([]string{"--shutdown-timeout", "5s"}); err != nil {
		t.Fatal(err)
	}
	c := root.PersistentFlags()
	if v, _ := c.GetString("master-key"); v == "" {
		t.Fatal("FORMWARD_MASTER_KEY not read")
	}
	if addr := serve.Flags().Lookup("http-addr").Value.String(); addr != "127.0.0.1:9999" {
		t.Fatalf("env not applied: %s", addr)
	}
	if d, _ := time.ParseDuration(serve.Flags().Lookup("shutdown-timeout").Value.String()); d != 5*time.Second {
		t.Fatalf("flag does not win over env: %v", d)
	}
	// Every flag of every command names its variable in --help, and no secret appears there.
	for _, cmd := range root.Commands() {
		for _, sub := range append(cmd.Commands(), cmd) {
			out.Reset()
			root.SetArgs(append(strings.Fields(strings.TrimPrefix(sub.CommandPath(), "formward ")), "--help"))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			help := out.String()
			if strings.Contains(help, "c2VjcmV0") {
				t.Fatalf("%s --help shows the master key", sub.CommandPath())
			}
			for _, line := range strings.Split(help, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "--") && !strings.Contains(line, "--help") && !strings.Contains(line, "[FORMWARD_") {
					t.Errorf("%s: flag without a variable: %s", sub.CommandPath(), line)
				}
			}
		}
	}
}

func TestBadEnvironmentValueIsAnError(t *testing.T) {
	t.Setenv("FORMWARD_GROUP_COMMIT_MAX", "many")
	var out bytes.Buffer
	root := newRootCommand(&out, &out)
	root.SetArgs([]string{"keys", "list"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "FORMWARD_GROUP_COMMIT_MAX") {
		t.Fatalf("want an error naming FORMWARD_GROUP_COMMIT_MAX, got %v", err)
	}
}

// The defaults of every command are valid; bad values are all reported at start, by their
// variable's name, before anything is opened or created.
func TestConfigIsValidatedOnceAtStart(t *testing.T) {
	_, root := newCLI(&bytes.Buffer{}, &bytes.Buffer{})
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		c, r := newCLI(&bytes.Buffer{}, &bytes.Buffer{})
		target, _, err := r.Find(strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "formward")))
		if err != nil {
			t.Fatal(err)
		}
		if err := target.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		if err := c.cfg.Validate(func(f string) bool { return target.Flags().Lookup(f) != nil }); err != nil {
			t.Errorf("%s: defaults do not validate: %v", cmd.CommandPath(), err)
		}
	}
	walk(root)

	dir := filepath.Join(t.TempDir(), "data")
	code, _, stderr := run(t, "serve", "--data-dir", dir, "--trusted-proxies", "10.0.0.0/99", "--metrics-addr", "9464",
		"--tls-cert-file", "cert.pem", "--public-url", "forms.example.com", "--delivery-timeout", "0s", "--max-fields", "0")
	if code == 0 {
		t.Fatal("serve started with bad settings")
	}
	for _, name := range []string{"FORMWARD_TRUSTED_PROXIES", "FORMWARD_METRICS_ADDR", "FORMWARD_TLS_CERT_FILE",
		"FORMWARD_PUBLIC_URL", "FORMWARD_DELIVERY_TIMEOUT", "FORMWARD_MAX_FIELDS"} {
		if !strings.Contains(stderr, name) {
			t.Errorf("the error does not name %s:\n%s", name, stderr)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("serve with bad settings created its data dir (%v)", err)
	}
}
