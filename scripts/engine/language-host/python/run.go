package main

import (
	"context"
	_ "embed"
	"io"
	"os"
	"os/exec"
	"strconv"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// runner is the Python side of Run: it configures the Pulumi SDK from its
// arguments and runs the program in the stack (see runner.py). It exits with
// 32 once it has shown the user the program's error, as Pulumi's own hosts do.
//
//go:embed runner.py
var runner string

// Run starts `python -u -c <runner.py> <settings> -- <entry point> [args]`
// in the program's folder, the stack's configuration in PULUMI_CONFIG and
// PULUMI_CONFIG_SECRET_KEYS, where the SDK reads it.
func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	return h.RunProgram(ctx, req, func(runCtx context.Context) (*exec.Cmd, error) {
		return h.pythonCommand(runCtx, req)
	})
}

func (h *languageHost) pythonCommand(ctx context.Context, req *pulumirpc.RunRequest) (*exec.Cmd, error) {
	info := req.GetInfo()
	python, err := programPython(info)
	if err != nil {
		return nil, err
	}
	config, secretKeys, err := host.Configuration(req)
	if err != nil {
		return nil, err
	}

	args := []string{"-u", "-c", runner,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.Engine(),
		"--organization", req.GetOrganization(),
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--root-directory", rootDirectory(info),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
		"--dry-run", strconv.FormatBool(req.GetDryRun()),
		"--", host.EntryPoint(info, req.GetProgram()),
	}
	args = append(args, req.GetArgs()...)

	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = host.ProgramDirectory(info, req.GetPwd())
	cmd.Env = append(os.Environ(),
		"PULUMI_CONFIG="+config,
		"PULUMI_CONFIG_SECRET_KEYS="+secretKeys,
	)
	// Fresh pipes rather than our own descriptors, which the engine reads.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	return cmd, nil
}
