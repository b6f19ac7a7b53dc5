package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// exitAfterReportedError is the exit code Pulumi's SDKs (and python/runner.py)
// use once they have shown the user an actionable error: Node.js's run script
// (cmd/run/index.js, nodeJSProcessExitedAfterLoggingUserActionableMessage), the
// Go SDK (constant.ExitStatusLoggedError). The engine should then stop without
// a message of its own: a "bail".
const exitAfterReportedError = 32

// Failed is the answer to a Run request that could not run the program.
func Failed(format string, args ...any) (*pulumirpc.RunResponse, error) {
	return &pulumirpc.RunResponse{Error: fmt.Sprintf(format, args...)}, nil
}

// RunProgram answers a Run request with the command that prepare makes: its
// error, or how the command ended. The command ends with the request or with
// the host, whichever stops first: prepare makes it with the context it is given.
func (b *Base) RunProgram(
	ctx context.Context, req *pulumirpc.RunRequest, prepare func(context.Context) (*exec.Cmd, error),
) (*pulumirpc.RunResponse, error) {
	if req.GetAttachDebugger() {
		return Failed("attaching a debugger is not supported by this project's %s language host", b.language)
	}
	b.programs.Add(1)
	defer b.programs.Done()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(b.stopped, cancel)()
	cmd, err := prepare(runCtx)
	if err != nil {
		return Failed("%v", err)
	}

	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exit) && exit.ExitCode() == exitAfterReportedError:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return Failed("Program exited with non-zero exit code: %d", exit.ExitCode())
	case errors.As(err, &exit):
		return Failed("Program exited unexpectedly: %v", exit)
	default:
		return Failed("could not run %s: %v", cmd.Path, err)
	}
}

// Configuration is the stack's configuration and its secret keys as JSON, as
// the SDKs read them from PULUMI_CONFIG and PULUMI_CONFIG_SECRET_KEYS.
func Configuration(req *pulumirpc.RunRequest) (config, secretKeys string, err error) {
	config, err = jsonText(req.GetConfig(), "{}")
	if err != nil {
		return "", "", fmt.Errorf("cannot serialize the stack configuration: %w", err)
	}
	secretKeys, err = jsonText(req.GetConfigSecretKeys(), "[]")
	if err != nil {
		return "", "", fmt.Errorf("cannot serialize the secret configuration keys: %w", err)
	}
	return config, secretKeys, nil
}

// jsonText serializes value, using empty when it is nil (a nil map or slice
// would become "null", which the SDKs do not expect).
func jsonText[T any](value T, empty string) (string, error) {
	data, err := json.Marshal(value)
	if err != nil || string(data) == "null" {
		return empty, err
	}
	return string(data), nil
}

// ProgramDirectory prefers the ProgramInfo every current engine sends, and
// falls back to the deprecated directory field of older requests.
func ProgramDirectory(info *pulumirpc.ProgramInfo, deprecated string) string {
	return firstGiven(info.GetProgramDirectory(), deprecated)
}

// EntryPoint is relative to the program directory; "." lets the language's
// runner pick its default (package.json's main or index.js / index.ts for
// Node.js, __main__.py for Python).
func EntryPoint(info *pulumirpc.ProgramInfo, deprecated string) string {
	return firstGiven(info.GetEntryPoint(), deprecated)
}

// firstGiven is the current field, else the deprecated one, else ".".
func firstGiven(current, deprecated string) string {
	if current != "" {
		return current
	}
	if deprecated != "" {
		return deprecated
	}
	return "."
}
