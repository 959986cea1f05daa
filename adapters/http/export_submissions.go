package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
)

// timeBound reads an optional RFC 3339 query parameter.
func timeBound(c *gin.Context, name string) (*time.Time, error) {
	s, ok := c.GetQuery(name)
	if !ok {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, badRequest(name + " must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z")
	}
	t = t.UTC()
	return &t, nil
}

// exportSubmissions streams every submission of the form, oldest first, as CSV, XLSX or
// NDJSON, reading one batch at a time, through the writers of adapters/httpkit.
func (a *api) exportSubmissions(c *gin.Context) {
	format := c.DefaultQuery("format", "csv")
	if !httpkit.ExportFormat(format) {
		fail(c, a.Logger, badRequest("format must be csv, xlsx or ndjson"))
		return
	}
	q := capture.ExportSubmissions{FormID: c.Param("id"), Format: format}
	var ok bool
	if q.IncludeRemoved, ok = httpkit.IncludeRemoved(c.GetQuery("include_removed")); !ok {
		fail(c, a.Logger, badRequest("include_removed must be true or false"))
		return
	}
	value, present := c.GetQuery("file_links")
	links, ok := httpkit.ExportFileLinks(format, value, present)
	if !ok {
		fail(c, a.Logger, badRequest(httpkit.ExportFileLinksError))
		return
	}
	q.SignedFileLinks = links == httpkit.SignedFileLinks
	var err error
	if q.CreatedAfter, err = timeBound(c, "created_after"); err != nil {
		fail(c, a.Logger, err)
		return
	}
	if q.CreatedBefore, err = timeBound(c, "created_before"); err != nil {
		fail(c, a.Logger, err)
		return
	}
	if q.CreatedAfter != nil && q.CreatedBefore != nil && !q.CreatedAfter.Before(*q.CreatedBefore) {
		fail(c, a.Logger, badRequest("created_before must be later than created_after"))
		return
	}
	// id, repeated, exports only those submissions (at most capture.MaxExportIDs).
	q.IDs = c.QueryArray("id")
	if len(q.IDs) > capture.MaxExportIDs || slices.Contains(q.IDs, "") {
		fail(c, a.Logger, badRequest(fmt.Sprintf("id names from 1 to %d submissions, none empty", capture.MaxExportIDs)))
		return
	}
	ctx := c.Request.Context()
	export, err := a.App.Queries.ExportSubmissions.Handle(ctx, q)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	if err := httpkit.StreamExport(c, export, format, links.Linker(a.publicURL, a.fileURL)); err != nil {
		// The status is sent: the only way to tell the client the file is incomplete is to
		// break the connection, so that the download fails instead of looking complete.
		a.Logger.Error("export submissions", zap.String("form_id", q.FormID), zap.String("format", format), zap.Error(err))
		panic(http.ErrAbortHandler)
	}
}
