package host

import (
	"encoding/json"
	"fmt"
	"os"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// PluginManifest is the pulumi-plugin.json a generated SDK ships: the
// resource plugin the package needs.
type PluginManifest struct {
	Resource bool   `json:"resource"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Server   string `json:"server"`
}

// ReadManifest reads the pulumi-plugin.json at path.
func ReadManifest(path string) (PluginManifest, error) {
	var manifest PluginManifest
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &manifest)
	}
	if err != nil {
		return manifest, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return manifest, nil
}

// RequiredPackages answers GetRequiredPackages with the plugins of manifests,
// or with err, so that a host can pass on what its lookup returns.
func RequiredPackages(manifests []PluginManifest, err error) (*pulumirpc.GetRequiredPackagesResponse, error) {
	if err != nil {
		return nil, err
	}
	packages := make([]*pulumirpc.PackageDependency, 0, len(manifests))
	for _, m := range manifests {
		packages = append(packages, &pulumirpc.PackageDependency{
			Kind: "resource", Name: m.Name, Version: m.Version, Server: m.Server,
		})
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// RequiredPlugins answers the same for engines older than GetRequiredPackages.
func RequiredPlugins(manifests []PluginManifest, err error) (*pulumirpc.GetRequiredPluginsResponse, error) {
	required, err := RequiredPackages(manifests, err)
	if err != nil {
		return nil, err
	}
	plugins := make([]*pulumirpc.PluginDependency, 0, len(required.Packages))
	for _, p := range required.Packages {
		plugins = append(plugins, &pulumirpc.PluginDependency{Kind: p.Kind, Name: p.Name, Version: p.Version, Server: p.Server})
	}
	return &pulumirpc.GetRequiredPluginsResponse{Plugins: plugins}, nil
}
