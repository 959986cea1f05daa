package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// Cache lifetimes of the public page's assets. A hashed URL (/f/assets/form.3f9a1c02be.css)
// names one content for good, so browsers and CDNs keep it for a year without asking again; a
// new build has new hashes, hence new URLs. The plain name (/f/assets/form.css), for pages that
// link it by hand, may change with any release, so it is cached briefly.
const (
	hashedAssetCache   = "public, max-age=31536000, immutable"
	unhashedAssetCache = "public, max-age=300"
)

// asset is one embedded file of adapters/web/assets.
type asset struct {
	name, hashed string // form.css, form.3f9a1c02be.css
	etag         string
	content      []byte
}

// assetSet is the embedded assets by plain and by hashed name. It is built once from the
// embedded files, which never change while the process runs.
type assetSet struct {
	byName   map[string]*asset
	byHashed map[string]*asset
}

var assets = mustLoadAssets(assetFS)

func mustLoadAssets(fsys fs.FS) assetSet {
	s, err := loadAssets(fsys)
	if err != nil {
		panic("web: embedded assets: " + err.Error()) // the files are compiled in: a build defect
	}
	return s
}

// loadAssets reads every file under assets/ and names it with the first 10 hex digits of its
// SHA-256: enough to tell versions apart, short enough to read.
func loadAssets(fsys fs.FS) (assetSet, error) {
	s := assetSet{byName: map[string]*asset{}, byHashed: map[string]*asset{}}
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

// url is the hashed URL of a named asset; the templates call it as {{asset "form.css"}}. An
// unknown name is a template defect, so it panics at render time in tests rather than
// linking a file that does not exist.
func (s assetSet) url(name string) string {
	a, ok := s.byName[name]
	if !ok {
		panic("web: no embedded asset " + name)
	}
	return "/f/assets/" + a.hashed
}

// serve answers GET /f/assets/*path: a hashed name for a year (immutable), a plain name for a
// few minutes, anything else (including an outdated hash) 404. ETag and If-None-Match work on
// both. Compression is left to the server's middleware, so the ETag is weak: the gzip and the
// identity encodings of one file share it.
func (s assetSet) serve(c *gin.Context) {
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

// metaDescriptionMax is about what search engines and link previews show.
const metaDescriptionMax = 160

// head is what the pages' shared <head> needs: the title and a meta description.
type head struct {
	Title, Description string
}

// templateFuncs are the functions the page templates call besides the standard ones.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"asset": assets.url,
		// head builds the <head> data from a page's title and its descriptive text (the form's
		// description or the message); without one the description names the page.
		"head": func(title, text string) head {
			text = strings.Join(strings.Fields(text), " ")
			if text == "" {
				text = title + ": fill in the form and send it."
			}
			if utf8.RuneCountInString(text) > metaDescriptionMax {
				r := []rune(text)[:metaDescriptionMax-1]
				text = strings.TrimRight(string(r), " ") + "…"
			}
			return head{Title: title, Description: text}
		},
	}
}
