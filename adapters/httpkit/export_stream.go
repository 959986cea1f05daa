package httpkit

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/application/capture"
)

// ExportFormat reports whether format is an export file format (csv, xlsx, ndjson).
func ExportFormat(format string) bool {
	_, ok := exportFormats[format]
	return ok
}

// IncludeRemoved reads an export's include_removed query value: absent or "false" is false,
// "true" is true; ok is false for anything else.
func IncludeRemoved(value string, present bool) (include, ok bool) {
	switch {
	case !present || value == "false":
		return false, true
	case value == "true":
		return true, true
	}
	return false, false
}

// StreamExport writes e as a download in format: the headers (type, attachment name,
// no-store), then the rows as they are read. The API and the dashboard both stream their
// exports through it, so a file is the same byte for byte from either. An error after the headers went out means an incomplete
// file: the caller should break the connection (panic(http.ErrAbortHandler)).
func StreamExport(c *gin.Context, e *capture.Export, format string, fileURL FileLinker) error {
	kind, ok := exportFormats[format]
	if !ok {
		return httperr.BadRequest("format must be csv, xlsx or ndjson")
	}
	if fileURL == nil {
		fileURL = KeepValue
	}
	// A large export outlives the server's write timeout, which is meant for ordinary answers.
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	h := c.Writer.Header()
	h.Set("Content-Type", kind.mediaType)
	h.Set("Content-Disposition", attachment(e.Form.Name()+"-"+e.At.UTC().Format("2006-01-02")+"."+kind.ext))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	switch format {
	case "csv":
		return exportCSV(c, e, fileURL)
	case "xlsx":
		return exportXLSX(c, e, fileURL)
	}
	return exportNDJSON(c, e, fileURL)
}
