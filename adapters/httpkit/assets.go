package httpkit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Cache lifetimes of embedded assets. A hashed URL (/f/assets/form.3f9a1c02be.css) names one
// content for good, so browsers and CDNs keep it for a year without asking again; a new build
// has new hashes, hence new URLs. The plain name (/f/assets/form.css), for pages that link it
// by hand, may change with any release, so it is cached briefly.
const (
	hashedAssetCache   = "public, max-age=31536000, immutable"
	unhashedAssetCache = "public, max-age=300"
)

// asset is one embedded file.
type asset struct {
	name, hashed string // form.css, form.3f9a1c02be.css
	etag         string
	content      []byte
}

// Assets are the embedded files of a pages adapter (the public pages, the dashboard) by plain
// and by hashed name, served under one URL prefix. They are read once from the embedded files,
// which never change while the process runs.
type Assets struct {
	prefix   string
	byName   map[string]*asset
	byHashed map[string]*asset
}

// MustLoadAssets is LoadAssets for files compiled into the binary, where an error is a build
// defect.
func MustLoadAssets(fsys fs.FS, prefix string) *Assets {
	s, err := LoadAssets(fsys, prefix)
	if err != nil {
		panic("httpkit: embedded assets: " + err.Error())
	}
	return s
}

// LoadAssets reads every file under assets/ of fsys and names it with the first 10 hex digits
// of its SHA-256: enough to tell versions apart, short enough to read. prefix is the URL path
// the files are served under, such as /f/assets/.
func LoadAssets(fsys fs.FS, prefix string) (*Assets, error) {
	s := &Assets{prefix: prefix, byName: map[string]*asset{}, byHashed: map[string]*asset{}}
	err := fs.WalkDir(fsys, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(content)
		hash := hex.EncodeToString(sum[:])[:10]
		name := strings.TrimPrefix(p, "assets/")
		ext := path.Ext(name)
		a := &asset{name: name, hashed: strings.TrimSuffix(name, ext) + "." + hash + ext, etag: `W/"` + hash + `"`, content: content}
		s.byName[a.name] = a
		s.byHashed[a.hashed] = a
		return nil
	})
	return s, err
}

// URL is the hashed URL of a named asset; templates call it as {{asset "form.css"}}. An
// unknown name is a template defect, so it panics at render time in tests rather than linking
// a file that does not exist.
func (s *Assets) URL(name string) string {
	a, ok := s.byName[name]
	if !ok {
		panic("httpkit: no embedded asset " + name)
	}
	return s.prefix + a.hashed
}

// Serve answers GET {prefix}*path: a hashed name for a year (immutable), a plain name for a
// few minutes, anything else (including an outdated hash) 404. ETag and If-None-Match work on
// both. Compression is left to the server's middleware (Compress), so the ETag is weak: the
// gzip and the identity encodings of one file share it.
func (s *Assets) Serve(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("path"), "/")
	cache := hashedAssetCache
	a, ok := s.byHashed[name]
	if !ok {
		a, ok = s.byName[name]
		cache = unhashedAssetCache
	}
	if !ok {
		c.Status(http.StatusNotFound)
		return
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", a.etag)
	http.ServeContent(c.Writer, c.Request, a.name, time.Time{}, bytes.NewReader(a.content))
}
