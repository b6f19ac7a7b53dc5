// Command pulumi-language-nodejs is this project's own Node.js language host
// for the Pulumi engine built by scripts/engine.mjs.
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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is the engine version this host was built for; scripts/engine.mjs
// sets it with -ldflags "-X main.version=v<pinned version>".
var version = "v0.0.0-dev"

func main() {
	// The engine may pass logging and tracing flags before the engine address,
	// and older engines passed runtime options as flags. They are accepted so
	// that parsing never fails, and ignored: runtime options now arrive with
	// each request. A flag set of our own, because the SDK's logging package
	// already registers some of these names on the global one.
	flags := flag.NewFlagSet("pulumi-language-nodejs", flag.ExitOnError)
	for _, name := range []string{"tracing", "root", "tsconfig", "nodeargs", "packagemanager"} {
		flags.String(name, "", "ignored")
	}
	flags.Bool("logtostderr", false, "ignored")
	flags.Bool("typescript", true, "ignored")
	flags.Int("v", 0, "ignored")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: Parse never returns an error.

	// Stop serving on Ctrl-C or SIGTERM, or when the engine that started us is
	// gone, so that neither this host nor the program it runs outlives its
	// engine: Pulumi starts plugins in process groups of their own, and a
	// killed CLI would otherwise leave them running on a machine that lives on.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host := &languageHost{engineAddress: flags.Arg(0), stopped: ctx}
	if host.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, engineCheckInterval, stop); err != nil {
			fail("cannot watch the engine: %v", err)
		}
	}
	cancel := make(chan bool)
	go func() {
		<-ctx.Done()
		close(cancel)
	}()

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
	})
	if err != nil {
		fail("cannot start the language host: %v", err)
	}
	// Like every plugin, the first line on stdout tells the engine our port.
	fmt.Printf("%d\n", handle.Port)
	err = <-handle.Done
	// A program still running is stopped with the host (see Run).
	host.programs.Wait()
	if err != nil {
		fail("language host stopped serving: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: "+format+"\n", args...)
	os.Exit(1)
}

// languageHost implements pulumirpc.LanguageRuntimeServer. The embedded
// Unimplemented server answers codes.Unimplemented for every method not
// defined here (GenerateProject, Pack, Link, RunPlugin, ...); the engine
// treats that as "not supported" where it matters (Cancel, GetRequiredPackages).
type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string

	// Done once the host stops serving; programs still running are then killed.
	stopped  context.Context
	programs sync.WaitGroup
}

// engineCheckInterval is how often the host asks whether its engine is still
// there. The official host waits five minutes; a killed CLI's host and
// program would then outlive it that long.
const engineCheckInterval = 2 * time.Second

func (h *languageHost) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

// Handshake is sent when the engine attaches to a running host; it carries
// the engine address that is otherwise our first argument.
func (h *languageHost) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	h.engineAddress = req.GetEngineAddress()
	h.mu.Unlock()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
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

	dir := programDirectory(req.GetInfo(), req.GetDirectory())
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
	dir := programDirectory(req.GetInfo(), req.GetPwd())
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

// programDirectory prefers the ProgramInfo every current engine sends, and
// falls back to the deprecated directory field of older requests.
func programDirectory(info *pulumirpc.ProgramInfo, deprecated string) string {
	if dir := info.GetProgramDirectory(); dir != "" {
		return dir
	}
	if deprecated != "" {
		return deprecated
	}
	return "."
}
