// Package migrations holds the versioned SQL schema of each dialect, embedded into the binary and
// applied with goose by adapters/persistence.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql; each folder is one goose migration set.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
