// Command pulumi-language-python is this project's own Python language host
// for the Pulumi engine built by scripts/engine/.
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
	"fmt"

	"dmarc-partner/language-host/host"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func main() {
	host.Serve(host.Language{
		Binary: "pulumi-language-python",
		Name:   "Python",
		Flags:  []string{"virtualenv", "typechecker", "toolchain"},
	}, &languageHost{})
}

// languageHost answers what concerns Python; host.Base the rest.
type languageHost struct {
	host.Base
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
