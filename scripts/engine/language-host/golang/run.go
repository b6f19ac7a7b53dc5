package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
)

// Run builds the program in its folder with `go build` (or takes the
// executable Pulumi.yaml names as `binary`) and runs it with what the Go
// SDK's pulumi.Run reads from the environment (sdk/v3 go/pulumi/run.go). A
// program built into a temporary file is removed once it has run.
func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	var temporary string
	defer func() {
		if temporary != "" {
			os.Remove(temporary)
		}
	}()
	return h.RunProgram(ctx, req, func(runCtx context.Context) (*exec.Cmd, error) {
		info := req.GetInfo()
		dir := host.ProgramDirectory(info, req.GetPwd())
		opts, err := parseOptions(info.GetOptions())
		if err != nil {
			return nil, err
		}
		env, err := programEnvironment(req, info, h.Engine())
		if err != nil {
			return nil, err
		}
		program, err := programExecutable(runCtx, dir, opts)
		if err != nil {
			return nil, err
		}
		if opts.binary == "" && opts.buildTarget == "" {
			temporary = program
		}
		cmd := exec.CommandContext(runCtx, program, req.GetArgs()...)
		cmd.Dir = dir
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		return cmd, nil
	})
}

// goOptions are the `runtime.options` of Pulumi.yaml Pulumi's Go host takes:
// `binary`, an executable built beforehand (a path, relative to the
// program's folder, or a name on PATH), or `buildTarget`, where `go build`
// writes the program (relative to the program's folder) and leaves it, so
// that an unchanged program is not linked again. Neither: a temporary file.
type goOptions struct {
	binary      string
	buildTarget string
}

func parseOptions(options *structpb.Struct) (goOptions, error) {
	var opts goOptions
	for name, value := range options.AsMap() {
		text, ok := value.(string)
		switch name {
		case "binary":
			opts.binary = text
		case "buildTarget":
			opts.buildTarget = text
		default:
			ok = true
		}
		if !ok {
			return opts, fmt.Errorf("runtime option %q in Pulumi.yaml must be a string (got %T)", name, value)
		}
	}
	if opts.binary != "" && opts.buildTarget != "" {
		return opts, errors.New(`runtime options "binary" and "buildTarget" in Pulumi.yaml exclude each other: give one`)
	}
	return opts, nil
}

// programExecutable is the executable to run: `binary`, or the program
// built by `go build`. A build that fails answers the compiler's messages.
func programExecutable(ctx context.Context, dir string, opts goOptions) (string, error) {
	if opts.binary != "" {
		if !strings.ContainsRune(opts.binary, filepath.Separator) {
			return exec.LookPath(opts.binary)
		}
		return inFolder(dir, opts.binary), nil
	}
	output := inFolder(dir, opts.buildTarget)
	if opts.buildTarget == "" {
		file, err := os.CreateTemp("", "pulumi-go-program-*")
		if err != nil {
			return "", fmt.Errorf("cannot make a file for the built program: %w", err)
		}
		file.Close()
		output = file.Name()
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", output, ".")
	build.Dir = dir
	if messages, err := build.CombinedOutput(); err != nil {
		if opts.buildTarget == "" {
			os.Remove(output)
		}
		return "", fmt.Errorf("go build in %s failed (%v):\n%s", dir, err, strings.TrimSpace(string(messages)))
	}
	return output, nil
}

func inFolder(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// programEnvironment is the host's environment with every variable
// pulumi.Run reads, each set even when empty so that a value inherited from
// the engine's environment cannot take the request's place.
func programEnvironment(req *pulumirpc.RunRequest, info *pulumirpc.ProgramInfo, engine string) ([]string, error) {
	config, secretKeys, err := host.Configuration(req)
	if err != nil {
		return nil, err
	}
	return append(os.Environ(),
		"PULUMI_MONITOR="+req.GetMonitorAddress(),
		"PULUMI_ENGINE="+engine,
		"PULUMI_ORGANIZATION="+req.GetOrganization(),
		"PULUMI_PROJECT="+req.GetProject(),
		"PULUMI_STACK="+req.GetStack(),
		"PULUMI_ROOT_DIRECTORY="+info.GetRootDirectory(),
		"PULUMI_CONFIG="+config,
		"PULUMI_CONFIG_SECRET_KEYS="+secretKeys,
		"PULUMI_DRY_RUN="+strconv.FormatBool(req.GetDryRun()),
		"PULUMI_PARALLEL="+strconv.Itoa(int(req.GetParallel())),
	), nil
}
