// Command pulumi-language-nodejs is this project's own Node.js language host
// for the Pulumi engine built by scripts/engine/.
//
// The official host (Go module
// github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) is not
// served by the Go module proxy, so a `pulumi up` on a folder with a
// Pulumi.yaml could not start a Node.js program. This host does the part the
// engine needs: it starts `node` on @pulumi/pulumi's own `cmd/run` script,
// which does all the Node-side work (TypeScript through the SDK's ts-node
// handling, connecting to the engine, exit codes). Everything that serves
// `pulumi new`, `convert` or package generation is left unimplemented.
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

	"dmarc-partner/language-host/host"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func main() {
	host.Serve(host.Language{
		Binary:    "pulumi-language-nodejs",
		Name:      "Node.js",
		Flags:     []string{"tsconfig", "nodeargs", "packagemanager"},
		BoolFlags: []string{"typescript"},
	}, &languageHost{})
}

// languageHost answers what concerns Node.js; host.Base the rest.
type languageHost struct {
	host.Base
}

// GetRequiredPlugins and GetRequiredPackages report nothing: plugin
// acquisition is disabled in this project, and the one plugin our programs use,
// the dynamic provider pulumi-resource-pulumi-nodejs, is found on PATH.
func (h *languageHost) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *languageHost) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// InstallDependencies leaves dependencies to npm: when the SDK can already be
// found from the program directory there is nothing to do; otherwise it runs
// `npm install` there, streaming npm's output back to the engine.
func (h *languageHost) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()

	dir := host.ProgramDirectory(req.GetInfo(), req.GetDirectory())
	if _, err := findRunScript(dir); err == nil {
		fmt.Fprintf(stdout, "Dependencies are managed by npm and already installed for %s.\n", dir)
		return nil
	}
	fmt.Fprintf(stdout, "Installing dependencies with npm install in %s...\n", dir)
	cmd := exec.CommandContext(server.Context(), "npm", "install")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install in %s failed: %w", dir, err)
	}
	return closer.Close()
}

// About describes the Node.js runtime for `pulumi about`.
func (h *languageHost) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on PATH: %w", err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("could not run node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{
		Executable: node,
		Version:    strings.TrimPrefix(strings.TrimSpace(string(out)), "v"),
	}, nil
}

// GetProgramDependencies lists the program's direct npm dependencies with the
// versions installed in node_modules (or the declared range when not installed).
func (h *languageHost) GetProgramDependencies(
	_ context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	dir := host.ProgramDirectory(req.GetInfo(), req.GetPwd())
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &manifest); err != nil {
		// No package.json: a program may use whatever node_modules it finds.
		return &pulumirpc.GetProgramDependenciesResponse{}, nil
	}
	var deps []*pulumirpc.DependencyInfo
	for _, declared := range []map[string]string{manifest.Dependencies, manifest.DevDependencies} {
		for name, wanted := range declared {
			deps = append(deps, &pulumirpc.DependencyInfo{Name: name, Version: installedVersion(dir, name, wanted)})
		}
	}
	slices.SortFunc(deps, func(a, b *pulumirpc.DependencyInfo) int { return strings.Compare(a.Name, b.Name) })
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

// installedVersion resolves a package the way Node does, through the
// node_modules folders of dir and its parents.
func installedVersion(dir, name, fallback string) string {
	for current := dir; ; current = filepath.Dir(current) {
		var pkg struct {
			Version string `json:"version"`
		}
		if readJSON(filepath.Join(current, "node_modules", name, "package.json"), &pkg) == nil && pkg.Version != "" {
			return pkg.Version
		}
		if filepath.Dir(current) == current {
			return fallback
		}
	}
}

func readJSON(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
