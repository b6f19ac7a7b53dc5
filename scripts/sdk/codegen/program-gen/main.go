// Command pulumi-program-gen writes Pulumi programs in one language from
// programs in PCL, Pulumi's own intermediate language, with the program
// generators `pulumi convert` uses: the reference pages' examples are each
// written once, in PCL, and shown in every language from it.
//
//	pulumi-program-gen -schema schema.json -language nodejs a.pp b.pp
//
// prints a JSON object: each program's path → its source in that language.
// The programs may use only the package of the schema given, which is bound
// from that file rather than loaded from a plugin. The languages a build
// generates are the generators table's keys, filled by the build's language
// files (languages.go, languages_dotnet.go and languages_yaml.go), as for
// pulumi-sdk-gen.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"dmarc-partner/codegen/schemafile"
	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
)

const tool = "pulumi-program-gen"

// A language's program generator: the program's files by name.
type generator func(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error)

var generators = map[string]generator{}

func main() {
	schemafile.Main(tool, run)
}

func run(args []string) error {
	flags := flag.NewFlagSet(tool, flag.ContinueOnError)
	schemaPath := flags.String("schema", "", "the package's schema, a JSON file")
	language := flags.String("language", "", "the programs' language, one of: "+strings.Join(schemafile.Languages(generators), ", "))
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *schemaPath == "" || flags.NArg() == 0 {
		return errors.New("usage: pulumi-program-gen -schema <schema.json> -language <language> <program.pp>...")
	}
	generate, pkg, err := schemafile.Prepare(tool, generators, *language, *schemaPath)
	if err != nil {
		return err
	}
	sources := map[string]string{}
	for _, path := range flags.Args() {
		program, err := bindProgram(path, pkg)
		if err != nil {
			return err
		}
		source, err := generated(path, program, generate)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", path, *language, err)
		}
		sources[path] = source
	}
	return json.NewEncoder(os.Stdout).Encode(sources)
}

// The one file a program of a single PCL file becomes; a diagnostic fails it,
// since a warning is a construct the language's program cannot express.
func generated(path string, program *pcl.Program, generate generator) (string, error) {
	files, diags, err := generate(program)
	if err != nil {
		return "", err
	}
	if len(diags) > 0 {
		return "", schemafile.DiagnosticsError(path, diags)
	}
	if len(files) != 1 {
		return "", fmt.Errorf("the generator wrote %d files, not one", len(files))
	}
	for _, content := range files {
		return string(content), nil
	}
	return "", nil
}
