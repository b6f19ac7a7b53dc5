// Package schemafile is what the two code generators of this module share:
// a package bound from its schema file alone, with no plugin host, and the
// way a command reports a failure.
package schemafile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/blang/semver"
	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Loader is given to the binders and the generators in place of a plugin
// host's: it serves Package, the one package bound from the schema file
// (none while that file is bound), and refuses any other, since loading its
// schema would mean starting its provider.
type Loader struct {
	Tool    string
	Package *schema.Package
}

func (loader Loader) find(name string) (*schema.Package, error) {
	if loader.Package == nil || loader.Package.Name != name {
		return nil, fmt.Errorf(
			"the schema or program refers to the package %q: %s knows only the schema it is given", name, loader.Tool)
	}
	return loader.Package, nil
}

func (loader Loader) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return loader.find(name)
}

func (loader Loader) LoadPackageV2(_ context.Context, descriptor *schema.PackageDescriptor) (*schema.Package, error) {
	return loader.find(descriptor.Name)
}

func (loader Loader) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	pkg, err := loader.find(name)
	if err != nil {
		return nil, err
	}
	return pkg.Reference(), nil
}

func (loader Loader) LoadPackageReferenceV2(
	_ context.Context, descriptor *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return loader.LoadPackageReference(descriptor.Name, nil)
}

// Bind reads the schema at path and binds and validates it against Pulumi's
// metaschema; warnings are printed, errors returned with the file's name.
func Bind(path string, tool string) (*schema.Package, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pkg, diags, err := schema.BindSpec(spec, Loader{Tool: tool}, schema.ValidationOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var errs hcl.Diagnostics
	for _, diag := range diags {
		if diag.Severity == hcl.DiagError {
			errs = append(errs, diag)
		} else {
			fmt.Fprintf(os.Stderr, "%s: warning: %s\n", path, describe(diag))
		}
	}
	if len(errs) > 0 {
		return nil, DiagnosticsError(path, errs)
	}
	return pkg, nil
}

// DiagnosticsError is one error of every diagnostic, a line each, after the
// file's name and the line a diagnostic names.
func DiagnosticsError(path string, diags hcl.Diagnostics) error {
	problems := make([]string, 0, len(diags))
	for _, diag := range diags {
		if diag.Subject != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %s", path, diag.Subject.Start.Line, describe(diag)))
		} else {
			problems = append(problems, fmt.Sprintf("%s: %s", path, describe(diag)))
		}
	}
	return errors.New(strings.Join(problems, "\n"))
}

func describe(diag *hcl.Diagnostic) string {
	if diag.Detail == "" {
		return diag.Summary
	}
	return diag.Summary + ": " + diag.Detail
}

// Prepare is a command's start: the generator of language in the build's
// table, and the package bound from the schema file at schemaPath.
func Prepare[G any](tool string, generators map[string]G, language string, schemaPath string) (G, *schema.Package, error) {
	generate, ok := generators[language]
	if !ok {
		return generate, nil, fmt.Errorf("-language %q: this build generates %s", language, strings.Join(Languages(generators), ", "))
	}
	pkg, err := Bind(schemaPath, tool)
	return generate, pkg, err
}

// Languages is the languages of a build's table of generators, sorted.
func Languages[G any](generators map[string]G) []string {
	names := make([]string, 0, len(generators))
	for name := range generators {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Main runs a command and exits with its failure, named by the tool.
func Main(tool string, run func(args []string) error) {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", tool, err)
		os.Exit(1)
	}
}
