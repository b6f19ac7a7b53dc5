package main

import (
	"bytes"
	"fmt"
	"os"

	"dmarc-partner/codegen/schemafile"
	"github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

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
		return nil, schemafile.DiagnosticsError(path, parser.Diagnostics)
	}
	program, diags, err := pcl.BindProgram(parser.Files, pcl.Loader(schemafile.Loader{Tool: tool, Package: pkg}))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if diags.HasErrors() {
		return nil, schemafile.DiagnosticsError(path, diags)
	}
	return program, nil
}
