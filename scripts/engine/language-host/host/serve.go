// Package host is what this project's own language hosts (nodejs/, python/,
// golang/) share: serving the engine's LanguageRuntime gRPC service, stopping
// with the engine, running a program for a Run request, and reading the
// pulumi-plugin.json of a Pulumi package's SDK. Each language's command holds
// only what is that language's own.
package host

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

// version is the engine version the hosts were built for; scripts/engine/
// sets it with -ldflags "-X dmarc-partner/language-host/host.version=v<pinned version>".
var version = "v0.0.0-dev"

// engineCheckInterval is how often a host asks whether its engine is still
// there. The official hosts wait five minutes; a killed CLI's host and
// program would then outlive it that long.
const engineCheckInterval = 2 * time.Second

// Language names a host: its binary (in messages) and its language (in
// answers to the engine), and the flags of its own that engines may pass,
// which are accepted and ignored.
type Language struct {
	Binary    string
	Name      string
	Flags     []string
	BoolFlags []string
}

// Server is a language's LanguageRuntime service; it embeds Base.
type Server interface {
	pulumirpc.LanguageRuntimeServer
	base() *Base
}

// Serve runs server until Ctrl-C, SIGTERM, or the engine that started it is
// gone, so that neither the host nor the program it runs outlives its
// engine: Pulumi starts plugins in process groups of their own, and a killed
// CLI would otherwise leave them running on a machine that lives on.
func Serve(language Language, server Server) {
	// The engine may pass logging and tracing flags before the engine
	// address, and older engines passed runtime options as flags. They are
	// accepted so that parsing never fails, and ignored: runtime options now
	// arrive with each request. A flag set of our own, because the SDK's
	// logging package already registers some of these names on the global one.
	flags := flag.NewFlagSet(language.Binary, flag.ExitOnError)
	for _, name := range append([]string{"tracing", "root"}, language.Flags...) {
		flags.String(name, "", "ignored")
	}
	for _, name := range append([]string{"logtostderr"}, language.BoolFlags...) {
		flags.Bool(name, false, "ignored")
	}
	flags.Int("v", 0, "ignored")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: Parse never returns an error.

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host := server.base()
	host.language, host.engineAddress, host.stopped = language.Name, flags.Arg(0), ctx
	if host.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, engineCheckInterval, stop); err != nil {
			fail(language, "cannot watch the engine: %v", err)
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
			pulumirpc.RegisterLanguageRuntimeServer(srv, server)
			return nil
		},
	})
	if err != nil {
		fail(language, "cannot start the language host: %v", err)
	}
	// Like every plugin, the first line on stdout tells the engine our port.
	fmt.Printf("%d\n", handle.Port)
	err = <-handle.Done
	// A program still running is stopped with the host (see RunProgram).
	host.programs.Wait()
	if err != nil {
		fail(language, "language host stopped serving: %v", err)
	}
}

func fail(language Language, format string, args ...any) {
	fmt.Fprintf(os.Stderr, language.Binary+": "+format+"\n", args...)
	os.Exit(1)
}

// Base is the part of pulumirpc.LanguageRuntimeServer every host answers
// alike. The embedded Unimplemented server answers codes.Unimplemented for
// every method a host does not define (GenerateProject, Pack, Link,
// RunPlugin, ...); the engine treats that as "not supported" where it
// matters (Cancel, GetRequiredPackages).
type Base struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	language      string
	mu            sync.Mutex
	engineAddress string

	// Done once the host stops serving; programs still running are then killed.
	stopped  context.Context
	programs sync.WaitGroup
}

func (b *Base) base() *Base { return b }

// Engine is the engine's address, for the program to connect to.
func (b *Base) Engine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.engineAddress
}

// Handshake is sent when the engine attaches to a running host; it carries
// the engine address that is otherwise our first argument.
func (b *Base) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	b.mu.Lock()
	b.engineAddress = req.GetEngineAddress()
	b.mu.Unlock()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (b *Base) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}
