package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// runner is the Python side of Run: it configures the Pulumi SDK from its
// arguments and runs the program in the stack (see runner.py).
//
//go:embed runner.py
var runner string

// exitAfterReportedError is the exit code runner.py uses once it has shown
// the user the program's error: the engine then stops without a message of
// its own (a "bail"), as with Pulumi's own hosts.
const exitAfterReportedError = 32

// Run starts `python -u -c <runner.py> <settings> -- <entry point> [args]`
// in the program's folder, the stack's configuration in PULUMI_CONFIG and
// PULUMI_CONFIG_SECRET_KEYS, where the SDK reads it.
func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	failed := func(format string, args ...any) (*pulumirpc.RunResponse, error) {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf(format, args...)}, nil
	}
	if req.GetAttachDebugger() {
		return failed("attaching a debugger is not supported by this project's Python language host")
	}
	info := req.GetInfo()
	opts, err := parseOptions(info)
	if err != nil {
		return failed("%v", err)
	}
	python, err := interpreter(info, opts)
	if err != nil {
		return failed("%v", err)
	}
	config, err := jsonString(req.GetConfig(), "{}")
	if err != nil {
		return failed("cannot serialize the stack configuration: %v", err)
	}
	secretKeys, err := jsonString(req.GetConfigSecretKeys(), "[]")
	if err != nil {
		return failed("cannot serialize the secret configuration keys: %v", err)
	}

	dir := programDirectory(info, req.GetPwd())
	args := []string{"-u", "-c", runner,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engine(),
		"--organization", req.GetOrganization(),
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--root-directory", rootDirectory(info),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
		"--dry-run", strconv.FormatBool(req.GetDryRun()),
		"--", entryPoint(info, req.GetProgram()),
	}
	args = append(args, req.GetArgs()...)

	// The program ends with the request or with the host, whichever stops first.
	h.programs.Add(1)
	defer h.programs.Done()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.stopped, cancel)()
	cmd := exec.CommandContext(runCtx, python, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PULUMI_CONFIG="+config,
		"PULUMI_CONFIG_SECRET_KEYS="+secretKeys,
	)
	// Fresh pipes rather than our own descriptors, which the engine reads.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}

	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exit) && exit.ExitCode() == exitAfterReportedError:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return failed("Program exited with non-zero exit code: %d", exit.ExitCode())
	case errors.As(err, &exit):
		return failed("Program exited unexpectedly: %v", exit)
	default:
		return failed("could not run %s: %v", python, err)
	}
}

// entryPoint is relative to the program's folder: "." runs its __main__.py,
// Pulumi.yaml's `main` may name another folder or a file.
func entryPoint(info *pulumirpc.ProgramInfo, deprecated string) string {
	if entry := info.GetEntryPoint(); entry != "" {
		return entry
	}
	if deprecated != "" {
		return deprecated
	}
	return "."
}

// jsonString serializes value, using empty when it is nil (a nil map or slice
// would become "null", which the SDK does not expect).
func jsonString[T any](value T, empty string) (string, error) {
	data, err := json.Marshal(value)
	if err != nil || string(data) == "null" {
		return empty, err
	}
	return string(data), nil
}
