package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// pluginManifest is the pulumi-plugin.json a generated Python SDK ships in
// its package folder: the resource plugin the package needs.
type pluginManifest struct {
	Resource bool   `json:"resource"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Server   string `json:"server"`
}

// GetRequiredPackages names the resource plugin of every package installed
// in the program's Python that ships a pulumi-plugin.json, so that the
// engine loads them before the program asks.
func (h *languageHost) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	manifests, err := installedPlugins(ctx, req.GetInfo())
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

// GetRequiredPlugins answers the same for engines that ask the older way.
func (h *languageHost) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	manifests, err := installedPlugins(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	plugins := make([]*pulumirpc.PluginDependency, 0, len(manifests))
	for _, m := range manifests {
		plugins = append(plugins, &pulumirpc.PluginDependency{
			Kind: "resource", Name: m.Name, Version: m.Version, Server: m.Server,
		})
	}
	return &pulumirpc.GetRequiredPluginsResponse{Plugins: plugins}, nil
}

// sitePackagesScript prints the interpreter's site-packages folders as JSON.
const sitePackagesScript = "import json, site; print(json.dumps(site.getsitepackages()))"

// installedPlugins reads <site-packages>/<package>/pulumi-plugin.json of the
// program's Python, sorted by name; manifests of packages that are not
// resource plugins (`"resource": false`) are left out.
func installedPlugins(ctx context.Context, info *pulumirpc.ProgramInfo) ([]pluginManifest, error) {
	opts, err := parseOptions(info)
	if err != nil {
		return nil, err
	}
	python, err := interpreter(info, opts)
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, python, "-c", sitePackagesScript).Output()
	if err != nil {
		return nil, fmt.Errorf("cannot list the site-packages of %s: %w", python, err)
	}
	var folders []string
	if err := json.Unmarshal(out, &folders); err != nil {
		return nil, fmt.Errorf("cannot read the site-packages of %s: %w", python, err)
	}
	var manifests []pluginManifest
	for _, folder := range folders {
		paths, _ := filepath.Glob(filepath.Join(folder, "*", "pulumi-plugin.json"))
		for _, path := range paths {
			manifest, err := readManifest(path)
			if err != nil {
				return nil, err
			}
			if manifest.Resource {
				manifests = append(manifests, manifest)
			}
		}
	}
	slices.SortFunc(manifests, func(a, b pluginManifest) int { return strings.Compare(a.Name, b.Name) })
	return manifests, nil
}

func readManifest(path string) (pluginManifest, error) {
	var manifest pluginManifest
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &manifest)
	}
	if err == nil && manifest.Resource && manifest.Name == "" {
		err = fmt.Errorf("no plugin name")
	}
	if err != nil {
		return manifest, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return manifest, nil
}
