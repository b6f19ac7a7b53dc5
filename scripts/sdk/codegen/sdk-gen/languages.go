//go:build !dotnet

package main

import (
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
)

// The generators of the engine's own pkg/v3. No overlays (extra files) and
// no local dependencies: the SDKs are published ones.
func init() {
	generators["nodejs"] = func(pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return nodejs.GeneratePackage(tool, pkg, nil, nil, false, loader)
	}
	generators["python"] = func(pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return python.GeneratePackage(tool, pkg, nil, loader)
	}
	generators["go"] = func(pkg *schema.Package, _ schema.ReferenceLoader) (map[string][]byte, error) {
		return gogen.GeneratePackage(tool, pkg, nil)
	}
}
