package main

import (
	"context"
	"fmt"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// The loader the binders are given in place of a plugin host's: it serves the
// one package bound from the schema file (none while that file is bound), and
// refuses any other, which would mean starting its provider.
type onePackage struct{ pkg *schema.Package }

func (loader onePackage) find(name string) (*schema.Package, error) {
	if loader.pkg == nil || loader.pkg.Name != name {
		return nil, fmt.Errorf("the program or schema refers to the package %q: %s knows only the schema it is given", name, tool)
	}
	return loader.pkg, nil
}

func (loader onePackage) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return loader.find(name)
}

func (loader onePackage) LoadPackageV2(_ context.Context, descriptor *schema.PackageDescriptor) (*schema.Package, error) {
	return loader.find(descriptor.Name)
}

func (loader onePackage) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	pkg, err := loader.find(name)
	if err != nil {
		return nil, err
	}
	return pkg.Reference(), nil
}

func (loader onePackage) LoadPackageReferenceV2(
	_ context.Context, descriptor *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return loader.LoadPackageReference(descriptor.Name, nil)
}
