package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Binds the schema as pulumi-sdk-gen does: a schema that names another
// package is refused, as is one with errors.
func bindSchema(path string) (*schema.Package, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pkg, diags, err := schema.BindSpec(spec, onePackage{}, schema.ValidationOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if diags.HasErrors() {
		return nil, diagnosticsError(path, diags)
	}
	return pkg, nil
}

// Parses and binds one PCL file against the schema's package alone.
func bindProgram(path string, pkg *schema.Package) (*pcl.Program, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	parser := syntax.NewParser()
	if err := parser.ParseFile(bytes.NewReader(text), path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if parser.Diagnostics.HasErrors() {
		return nil, diagnosticsError(path, parser.Diagnostics)
	}
	program, diags, err := pcl.BindProgram(parser.Files, pcl.Loader(onePackage{pkg}))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if diags.HasErrors() {
		return nil, diagnosticsError(path, diags)
	}
	return program, nil
}
