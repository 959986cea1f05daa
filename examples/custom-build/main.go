// Command formward is Formward with the extensions of this module compiled in: the CLI is
// Formward's, the blank imports below register what they add (see docs/extending.md).
package main

import (
	"os"

	"github.com/formward/formward/bootstrap"

	_ "example.com/formward-custom/teams" // the teams_message workflow action
)

func main() {
	os.Exit(bootstrap.Main(os.Args[1:], os.Stdout, os.Stderr))
}
