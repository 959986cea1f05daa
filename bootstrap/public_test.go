package bootstrap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUploadTempDir(t *testing.T) {
	data := t.TempDir()
	cfg := func(tempDir string) Config {
		var c Config
		c.DataDir, c.TempDir = data, tempDir
		return c
	}
	dir, err := uploadTempDir(cfg(""))
	if err != nil || dir != filepath.Join(data, "tmp") {
		t.Fatalf("default: %q %v", dir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("not created: %v", err)
	}
	own := filepath.Join(t.TempDir(), "spool")
	if dir, err := uploadTempDir(cfg(own)); err != nil || dir != own {
		t.Fatalf("configured: %q %v", dir, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadTempDir(cfg(filepath.Join(file, "tmp"))); err == nil || !strings.Contains(err.Error(), "FORMWARD_TEMP_DIR") {
		t.Fatalf("unusable dir: %v", err)
	}
}

func TestFileSettings(t *testing.T) {
	var cfg Config
	cfg.LimitsConfig = LimitsConfig{DefaultPlan: "business", MaxFields: 1, MaxOptions: 1, MaxWebhooks: 1, MaxWorkflows: 1, MaxActions: 1, MaxConditions: 1}
	cfg.MaxFilesPerField, cfg.MaxFilesPerPost, cfg.HTTPAddr = 3, 7, "127.0.0.1:8080"
	s, err := provideSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.FileLimits.PerField != 3 || s.FileLimits.PerPost != 7 || s.PublicURL != "http://127.0.0.1:8080" {
		t.Fatalf("settings %+v", s)
	}
	cfg.PublicURL = "https://forms.example.com/"
	if s, _ := provideSettings(cfg); s.PublicURL != "https://forms.example.com" {
		t.Fatalf("public URL %q", s.PublicURL)
	}
	cfg.MaxFilesPerPost = -1
	if _, err := provideSettings(cfg); err == nil {
		t.Fatal("negative limit accepted")
	}
}
