// Package docs is the user documentation. The recipes that the dashboard offers to copy are
// read from these pages, so what people copy is what the documentation explains and what the
// browser tests run, with no second copy to drift.
package docs

import _ "embed"

// Embedding is embedding.md: the <iframe> recipe and the recipe that posts JSON from the
// site's own HTML with a script.
//
//go:embed embedding.md
var Embedding string
