package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/capture"
)

// ExportFormat reports whether format is an export file format (csv, xlsx, ndjson).
func ExportFormat(format string) bool {
	_, ok := exportFormats[format]
	return ok
}

// StreamExport writes e as a download in format, exactly as the API's export does: the
// headers (type, attachment name, no-store), then the rows as they are read. The dashboard
// streams its exports through it. An error after the headers went out means an incomplete
// file: the caller should break the connection (panic(http.ErrAbortHandler)).
func StreamExport(c *gin.Context, e *capture.Export, format string, fileURL FileLinker) error {
	kind, ok := exportFormats[format]
	if !ok {
		return badRequest("format must be csv, xlsx or ndjson")
	}
	if fileURL == nil {
		fileURL = keepValue
	}
	a := &api{fileURL: fileURL}
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	h := c.Writer.Header()
	h.Set("Content-Type", kind.mediaType)
	h.Set("Content-Disposition", attachment(e.Form.Name()+"-"+e.At.UTC().Format("2006-01-02")+"."+kind.ext))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	switch format {
	case "csv":
		return a.exportCSV(c, e)
	case "xlsx":
		return a.exportXLSX(c, e)
	}
	return a.exportNDJSON(c, e)
}
