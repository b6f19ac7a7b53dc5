// Command pulumi-language-go is this project's own Go language host for the
// Pulumi engine built by scripts/engine.mjs.
//
// The official host (Go module
// github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3) is not served by
// the Go module proxy, so a `pulumi up` on a Go program could not start.
// This host does the part the engine needs to run one: it names the
// provider plugins the program's modules carry (packages.go), and builds the
// program with `go build` and runs it with the environment Pulumi's Go SDK
// reads (run.go). Everything that serves `pulumi new`, `convert`, `install`,
// `about` or package generation is left unimplemented. Partners use
// Pulumi's own host, which an install of the Pulumi CLI brings.
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
// there: a killed CLI's host and the program it runs stop within it.
const engineCheckInterval = 2 * time.Second

func main() {
	// The engine may pass tracing flags, and older engines passed runtime
	// options as flags, before the engine address: accepted and ignored, so
	// that parsing never fails (runtime options now arrive with each request).
	flags := flag.NewFlagSet("pulumi-language-go", flag.ExitOnError)
	for _, name := range []string{"tracing", "root", "binary", "buildTarget"} {
		flags.String(name, "", "ignored")
	}
	flags.Bool("logtostderr", false, "ignored")
	flags.Int("v", 0, "ignored")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: Parse never returns an error.

	// Stop serving on Ctrl-C or SIGTERM, or when the engine that started us is
	// gone, so that neither this host nor the program it runs outlives it.
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
	fmt.Fprintf(os.Stderr, "pulumi-language-go: "+format+"\n", args...)
	os.Exit(1)
}

// languageHost implements pulumirpc.LanguageRuntimeServer; the embedded
// Unimplemented server answers codes.Unimplemented for the methods not
// defined here.
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
