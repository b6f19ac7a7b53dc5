//go:build dotnet

package main

import "github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"

// .NET's program generator, from the last pkg/v3 that has it (see
// pulumi-sdk-gen's languages_dotnet.go and scripts/project.mjs).
func init() {
	generators["dotnet"] = dotnet.GenerateProgram
}
