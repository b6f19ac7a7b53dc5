//go:build yaml

package main

import "github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/codegen"

// Pulumi YAML's program generator, built with the pkg/v3 its module requires
// (see scripts/project.mjs).
func init() {
	generators["yaml"] = codegen.GenerateProgram
}
