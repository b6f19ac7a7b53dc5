package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// A Go SDK of a Pulumi package says which provider plugin it needs in a
// pulumi-plugin.json in its module (the generated dmarc SDK: dmarc/), as
// Pulumi's code generator writes it; the program's module graph, as `go
// list -m -json all` prints it, tells where each module's files are.

// goModule is what `go list -m -json` prints of a module that matters here.
type goModule struct {
	Path    string
	Version string
	// Where the module's files are: the module cache, or a `replace`
	// directive's folder. Empty for a module not downloaded.
	Dir  string
	Main bool
}

// manifestPlaces are where a module keeps pulumi-plugin.json, relative to
// its root: the places Pulumi's own host looks.
var manifestPlaces = []string{"pulumi-plugin.json", "go/pulumi-plugin.json", "go/*/pulumi-plugin.json", "*/pulumi-plugin.json"}

func (h *languageHost) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return host.RequiredPackages(requiredPlugins(ctx, host.ProgramDirectory(req.GetInfo(), "")))
}

// GetRequiredPlugins answers engines older than GetRequiredPackages.
func (h *languageHost) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return host.RequiredPlugins(requiredPlugins(ctx, host.ProgramDirectory(req.GetInfo(), req.GetPwd())))
}

// requiredPlugins are the resource plugins named by the modules of the
// program in dir, each once; the plugin's version is its manifest's, else
// its module's.
func requiredPlugins(ctx context.Context, dir string) ([]host.PluginManifest, error) {
	modules, err := moduleGraph(ctx, dir)
	if err != nil {
		return nil, err
	}
	var plugins []host.PluginManifest
	seen := map[string]bool{}
	for _, module := range modules {
		if module.Main || module.Dir == "" {
			continue
		}
		manifest, found, err := readManifest(module.Dir)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", module.Path, err)
		}
		if !found || !manifest.Resource || manifest.Name == "" || seen[manifest.Name] {
			continue
		}
		seen[manifest.Name] = true
		if manifest.Version == "" {
			manifest.Version = module.Version
		}
		manifest.Version = strings.TrimPrefix(manifest.Version, "v")
		plugins = append(plugins, manifest)
	}
	return plugins, nil
}

// moduleGraph lists every module of the program in dir. A failure names
// the folder and carries what `go` said (a go.mod missing or broken).
func moduleGraph(ctx context.Context, dir string) ([]goModule, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", "all")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -json all in %s failed: %w\n%s", dir, err, stderr.String())
	}
	var modules []goModule
	decoder := json.NewDecoder(bytes.NewReader(out))
	for {
		var module goModule
		err := decoder.Decode(&module)
		if errors.Is(err, io.EOF) {
			return modules, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read go list's output in %s: %w", dir, err)
		}
		modules = append(modules, module)
	}
}

// readManifest reads the first pulumi-plugin.json found in manifestPlaces.
func readManifest(moduleDir string) (host.PluginManifest, bool, error) {
	for _, place := range manifestPlaces {
		paths, _ := filepath.Glob(filepath.Join(moduleDir, place)) // the patterns are well formed
		if len(paths) > 0 {
			manifest, err := host.ReadManifest(paths[0])
			return manifest, err == nil, err
		}
	}
	return host.PluginManifest{}, false, nil
}
