package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"dmarc-partner/language-host/host"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// pythonOptions are the `runtime.options` of Pulumi.yaml this host reads.
type pythonOptions struct {
	// virtualenv is the virtual environment's folder, relative to the
	// project's root (where Pulumi.yaml is) unless absolute; empty means the
	// python3 on PATH.
	virtualenv string
}

func parseOptions(info *pulumirpc.ProgramInfo) (pythonOptions, error) {
	var opts pythonOptions
	for name, value := range info.GetOptions().AsMap() {
		switch name {
		case "virtualenv":
			path, ok := value.(string)
			if !ok {
				return opts, fmt.Errorf("runtime option \"virtualenv\" in Pulumi.yaml must be a string, got %T", value)
			}
			opts.virtualenv = path
		case "toolchain":
			if value != "pip" {
				return opts, fmt.Errorf("runtime option \"toolchain\" in Pulumi.yaml: this project's Python language "+
					"host runs pip's virtual environments only, got %v", value)
			}
		}
		// typechecker and others concern Pulumi's own host only.
	}
	return opts, nil
}

// programPython is the Python that runs the program, as Pulumi.yaml's
// runtime options say.
func programPython(info *pulumirpc.ProgramInfo) (string, error) {
	opts, err := parseOptions(info)
	if err != nil {
		return "", err
	}
	return interpreter(info, opts)
}

// interpreter is the Python that runs the program: the virtual environment's
// when Pulumi.yaml names one, else python3 from PATH.
func interpreter(info *pulumirpc.ProgramInfo, opts pythonOptions) (string, error) {
	if opts.virtualenv == "" {
		python, err := exec.LookPath("python3")
		if err != nil {
			return "", fmt.Errorf("could not find python3 on PATH: %w", err)
		}
		return python, nil
	}
	venv := opts.virtualenv
	if !filepath.IsAbs(venv) {
		venv = filepath.Join(rootDirectory(info), venv)
	}
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(python); err != nil {
		return "", fmt.Errorf("the virtual environment %s named by Pulumi.yaml's runtime option \"virtualenv\" has "+
			"no bin/python: create it with python3 -m venv and pip install the program's requirements", venv)
	}
	return python, nil
}

// rootDirectory is where Pulumi.yaml is; older engines send only the program's folder.
func rootDirectory(info *pulumirpc.ProgramInfo) string {
	if root := info.GetRootDirectory(); root != "" {
		return root
	}
	return host.ProgramDirectory(info, "")
}
