package main

import (
	"context"
	"fmt"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// The loader given to the binder and the generators in place of a plugin
// host's: a schema that names another package (a type or resource of its,
// or a dependency) is refused with that package's name, since loading its
// schema would mean starting its provider.
type ownPackageOnly struct{}

func refuse(name string) error {
	return fmt.Errorf("the schema refers to the package %q: %s generates SDKs of self-contained schemas only", name, tool)
}

func (ownPackageOnly) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return nil, refuse(name)
}

func (ownPackageOnly) LoadPackageV2(_ context.Context, descriptor *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, refuse(descriptor.Name)
}

func (ownPackageOnly) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, refuse(name)
}

func (ownPackageOnly) LoadPackageReferenceV2(
	_ context.Context, descriptor *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, refuse(descriptor.Name)
}
