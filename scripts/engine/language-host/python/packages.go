package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// GetRequiredPackages names the resource plugin of every package installed
// in the program's Python that ships a pulumi-plugin.json, so that the
// engine loads them before the program asks.
func (h *languageHost) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return host.RequiredPackages(installedPlugins(ctx, req.GetInfo()))
}

// GetRequiredPlugins answers the same for engines that ask the older way.
func (h *languageHost) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return host.RequiredPlugins(installedPlugins(ctx, req.GetInfo()))
}

// sitePackagesScript prints the interpreter's site-packages folders as JSON.
const sitePackagesScript = "import json, site; print(json.dumps(site.getsitepackages()))"

// installedPlugins reads <site-packages>/<package>/pulumi-plugin.json of the
// program's Python, sorted by name; manifests of packages that are not
// resource plugins (`"resource": false`) are left out.
func installedPlugins(ctx context.Context, info *pulumirpc.ProgramInfo) ([]host.PluginManifest, error) {
	python, err := programPython(info)
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
	var manifests []host.PluginManifest
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
	slices.SortFunc(manifests, func(a, b host.PluginManifest) int { return strings.Compare(a.Name, b.Name) })
	return manifests, nil
}

// readManifest reads a package's pulumi-plugin.json, which must name the
// plugin of a resource package.
func readManifest(path string) (host.PluginManifest, error) {
	manifest, err := host.ReadManifest(path)
	if err == nil && manifest.Resource && manifest.Name == "" {
		err = fmt.Errorf("cannot read %s: no plugin name", path)
	}
	return manifest, err
}
