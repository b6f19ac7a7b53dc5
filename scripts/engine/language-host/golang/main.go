// Command pulumi-language-go is this project's own Go language host for the
// Pulumi engine built by scripts/engine/.
//
// The official host (Go module
// github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3) is not served by
// the Go module proxy, so a `pulumi up` on a Go program could not start.
// This host does the part the engine needs to run one: it names the
// provider plugins the program's modules carry (packages.go), and builds the
// program with `go build` and runs it with the environment Pulumi's Go SDK
// reads (run.go). Everything that serves `pulumi new`, `convert`, `install`,
// `about` or package generation is left unimplemented. Partners use
// Pulumi's own host, which an install of the Pulumi CLI brings.
package main

import "dmarc-partner/language-host/host"

func main() {
	host.Serve(host.Language{
		Binary: "pulumi-language-go",
		Name:   "Go",
		Flags:  []string{"binary", "buildTarget"},
	}, &languageHost{})
}

// languageHost answers what concerns Go; host.Base the rest.
type languageHost struct {
	host.Base
}
