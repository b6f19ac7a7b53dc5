// Command pulumi-language-python is this project's own Python language host
// for the Pulumi engine built by scripts/engine.mjs.
//
// The official host (Go module
// github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) is not
// served by the Go module proxy, so a `pulumi up` on a Python project could
// not start its program. This host does what running a program needs: it
// names the resource plugins of the Python packages installed beside the
// program (their pulumi-plugin.json), and runs the program with the Python
// of the project's virtual environment, through runner.py, which hands the
// engine's settings to the Pulumi SDK. Installing dependencies, `pulumi new`,
// `convert` and package generation are left to Pulumi's own host.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
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

// engineCheckInterval is how often the host asks whether its engine is still
// there, so that neither this host nor its program outlives a killed CLI.
const engineCheckInterval = 2 * time.Second

func main() {
	// Flags older engines passed (runtime options now come with each request)
	// are accepted and ignored, so that parsing never fails.
	flags := flag.NewFlagSet("pulumi-language-python", flag.ExitOnError)
	for _, name := range []string{"tracing", "root", "virtualenv", "typechecker", "toolchain"} {
		flags.String(name, "", "ignored")
	}
	flags.Bool("logtostderr", false, "ignored")
	flags.Int("v", 0, "ignored")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: Parse never returns an error.

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
	host.programs.Wait()
	if err != nil {
		fail("language host stopped serving: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pulumi-language-python: "+format+"\n", args...)
	os.Exit(1)
}

// languageHost implements pulumirpc.LanguageRuntimeServer; the embedded
// Unimplemented server answers codes.Unimplemented for the rest.
type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string

	// Done once the host stops serving; programs still running are then killed.
	stopped  context.Context
	programs sync.WaitGroup
}

func (h *languageHost) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

// Handshake carries the engine address when the engine attaches to a running host.
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

// InstallDependencies leaves the virtual environment to its owner (pip, or the
// project's scripts): the engine asks only when told to install.
func (h *languageHost) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, _, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprintln(stdout, "Dependencies are installed with pip into the project's virtual environment.")
	return closer.Close()
}
