// Command schemagen writes the handoff envelope's JSON Schema, generated
// from the Go types, to store/envelope/handoff-envelope-1.0.json. go
// generate runs it in that folder: go generate ./store/envelope.
package main

import (
	"fmt"
	"os"

	"github.com/baton-dev/baton/store/envelope"
)

func main() {
	b, err := envelope.GenerateSchema(".")
	if err == nil {
		err = os.WriteFile(envelope.SchemaFile, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
