//go:build !dotnet && !yaml

package main

import (
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
)

// The program generators of the engine's own pkg/v3, as pulumi convert has them.
func init() {
	generators["nodejs"] = nodejs.GenerateProgram
	generators["python"] = python.GenerateProgram
	generators["go"] = gogen.GenerateProgram
}
