// Package httpkit is what the three HTTP adapters share: the API (adapters/http), the public
// form pages (adapters/web) and the dashboard (adapters/dashboard). They never import one
// another (siblings_test.go checks it); whatever two of them need lives here:
//
//   - export.go, export_stream.go: the submission export writers (CSV, XLSX, NDJSON) and
//     StreamExport, the download both the API and the dashboard send;
//   - submission.go: a submission as JSON (the API's answers, NDJSON lines) and FileLinker,
//     which turns a submission's own uploads into signed download links;
//   - ids.go, utf8.go, input.go: request checks (WellFormedID, CheckUTF8) and ToInput, which
//     reads a JSON answer into a submitted value;
//   - assets.go: embedded assets served under content-hashed, immutable URLs;
//   - compress.go: the server's response compression;
//   - clientip.go: ClientIP, the respondent's address behind the trusted proxies.
//
// The table that turns errors into HTTP answers sits beside it in adapters/httperr.
package httpkit
