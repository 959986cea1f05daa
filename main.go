// Command formward is the Formward server and its operator CLI.
package main

import (
	"os"

	"github.com/formward/formward/bootstrap"
)

func main() {
	os.Exit(bootstrap.Main(os.Args[1:], os.Stdout, os.Stderr))
}
