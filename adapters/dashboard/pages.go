package dashboard

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/ports"
)

// pageSize is how many rows a list page shows.
const pageSize = 25

// pager links to the first page and to the next (older) one.
type pager struct{ Prev, Next string }

// pageOf reads the ?after= cursor of a list page: the keyset position of the last row shown
// before. A cursor that does not parse starts from the newest.
func pageOf(c *gin.Context) ports.Page {
	p := ports.Page{Limit: pageSize}
	raw, err := base64.RawURLEncoding.DecodeString(c.Query("after"))
	if err != nil || len(raw) == 0 {
		return p
	}
	ns, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return p
	}
	p.After = &ports.Position{CreatedAt: time.Unix(0, n).UTC(), ID: id}
	return p
}

// pagerFor links the next page after the last row (when the page was full or more is known).
func pagerFor(c *gin.Context, more bool, lastAt time.Time, lastID string) pager {
	var pg pager
	q := c.Request.URL.Query()
	if q.Get("after") != "" {
		q.Del("after")
		pg.Prev = pathWith(c.Request.URL.Path, q)
	}
	if more && lastID != "" {
		q.Set("after", base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(lastAt.UnixNano(), 10)+"."+lastID)))
		pg.Next = pathWith(c.Request.URL.Path, q)
	}
	return pg
}

func pathWith(p string, q url.Values) string {
	if len(q) == 0 {
		return p
	}
	return p + "?" + q.Encode()
}
