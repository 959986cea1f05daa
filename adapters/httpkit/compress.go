package httpkit

import (
	"mime"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressedTypes are the responses worth compressing: the public pages, their CSS and
// JavaScript, and the API's JSON. Everything else (images, archives, uploaded files of any type)
// is sent as it is: it is usually compressed already, or it is a respondent's file, which is
// served byte for byte and with ranges.
var compressedTypes = map[string]bool{
	"text/html":                true,
	"text/css":                 true,
	"text/javascript":          true,
	"application/javascript":   true,
	"application/json":         true,
	"application/problem+json": true,
	"text/plain":               true,
	"image/svg+xml":            true,
}

// filesPrefix is where uploaded files are downloaded (objectstore.FilesPath): never compressed.
const filesPrefix = "/files/"

// Compress wraps the server's handler (the API and the public pages) with gzip (or zstd, when
// the client prefers it) for text responses of 1 KiB or more, when the client accepts it. It
// sets Vary: Accept-Encoding, and drops Accept-Ranges on a compressed response. Downloads under
// /files/ pass through untouched.
//
// Compressing responses that mix a secret with text an attacker chooses can leak the secret
// through the compressed size (BREACH). Here no response carries a credential that a browser
// would attach by itself: API keys are bearer tokens a cross-site page cannot send, and the
// public page's render token only proves that the page was loaded.
func Compress(next http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.ContentTypeFilter(compressible))
	if err != nil {
		panic("compress: " + err.Error()) // only for invalid options, which are fixed here
	}
	compressed := wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, filesPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		compressed.ServeHTTP(w, r)
	})
}

// compressible reports whether a response of this Content-Type is compressed.
func compressible(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && compressedTypes[strings.ToLower(mediaType)]
}
