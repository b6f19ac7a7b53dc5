package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
)

// Run starts the program as `node [nodeargs] <@pulumi/pulumi/cmd/run> <flags>
// <entry point> [args]`. The run script parses the flags below (cmd/run/index.js)
// and reads the rest from the environment: config from PULUMI_CONFIG and
// PULUMI_CONFIG_SECRET_KEYS (runtime/config.js), TypeScript from
// PULUMI_NODEJS_TYPESCRIPT and PULUMI_NODEJS_TSCONFIG_PATH (cmd/run/run.js).
// The run script exits with 32 once it has shown the user an actionable error
// (cmd/run/index.js, nodeJSProcessExitedAfterLoggingUserActionableMessage).
func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	return h.RunProgram(ctx, req, func(runCtx context.Context) (*exec.Cmd, error) {
		return h.nodeCommand(runCtx, req)
	})
}

func (h *languageHost) nodeCommand(ctx context.Context, req *pulumirpc.RunRequest) (*exec.Cmd, error) {
	info := req.GetInfo()
	dir := host.ProgramDirectory(info, req.GetPwd())
	opts, err := parseOptions(info.GetOptions())
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on PATH: %w", err)
	}
	runScript, err := findRunScript(dir)
	if err != nil {
		return nil, err
	}
	config, secretKeys, err := host.Configuration(req)
	if err != nil {
		return nil, err
	}

	args := append(opts.nodeArgs, runScript)
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", h.Engine())
	flag("organization", req.GetOrganization())
	flag("project", req.GetProject())
	flag("stack", req.GetStack())
	flag("root-directory", info.GetRootDirectory())
	// The run script changes into --pwd and resolves the entry point from there.
	flag("pwd", dir)
	flag("parallel", strconv.Itoa(int(req.GetParallel())))
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	args = append(args, host.EntryPoint(info, req.GetProgram()))
	args = append(args, req.GetArgs()...)

	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PULUMI_CONFIG="+config,
		"PULUMI_CONFIG_SECRET_KEYS="+secretKeys,
		// Set either way, so that a value inherited from the engine's
		// environment cannot override Pulumi.yaml.
		"PULUMI_NODEJS_TYPESCRIPT="+strconv.FormatBool(opts.typescript),
	)
	if opts.tsconfig != "" {
		cmd.Env = append(cmd.Env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	// Node may switch the stdio descriptors it inherits to non-blocking mode;
	// handing it our own stdout/stderr would change them under the engine that
	// reads them. Wrapping the writers makes exec copy through fresh pipes.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	return cmd, nil
}

// nodeOptions are the `runtime.options` of Pulumi.yaml that concern running.
type nodeOptions struct {
	typescript bool
	tsconfig   string
	nodeArgs   []string
}

func parseOptions(options *structpb.Struct) (nodeOptions, error) {
	// TypeScript is on unless Pulumi.yaml turns it off, as with the official host.
	opts := nodeOptions{typescript: true}
	for name, value := range options.AsMap() {
		var ok bool
		switch name {
		case "typescript":
			opts.typescript, ok = value.(bool)
		case "tsconfig":
			opts.tsconfig, ok = value.(string)
		case "nodeargs":
			var joined string
			joined, ok = value.(string)
			// Split on blanks only: quoted arguments are not supported.
			opts.nodeArgs = strings.Fields(joined)
		default:
			// packagemanager and others only matter for installs, which npm does.
			ok = true
		}
		if !ok {
			return opts, fmt.Errorf("runtime option %q in Pulumi.yaml has the wrong type (%T)", name, value)
		}
	}
	return opts, nil
}

// findRunScript resolves @pulumi/pulumi/cmd/run from the program directory the
// way Node would (node_modules of the directory and its parents), so the
// program and the run script share one copy of the SDK. Symlinks are resolved
// for the same reason: Node identifies modules by their real path.
func findRunScript(dir string) (string, error) {
	for current := dir; ; current = filepath.Dir(current) {
		script := filepath.Join(current, "node_modules", "@pulumi", "pulumi", "cmd", "run")
		if _, err := os.Stat(filepath.Join(script, "index.js")); err == nil {
			return filepath.EvalSymlinks(script)
		}
		if filepath.Dir(current) == current {
			return "", fmt.Errorf("cannot find @pulumi/pulumi from %s: it looks like the Pulumi SDK is not installed; "+
				"run npm install", dir)
		}
	}
}
