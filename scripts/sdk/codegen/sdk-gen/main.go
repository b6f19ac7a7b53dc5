// Command pulumi-sdk-gen writes one language's SDK of a Pulumi package from
// its schema, with Pulumi's own code generators. `pulumi package gen-sdk`
// does the same through each language's host (pulumi-language-<language>),
// which the module proxy does not serve; the generators are plain Go
// packages, and binding a schema needs no plugin host as long as it names no
// other package.
//
//	pulumi-sdk-gen -schema schema.json -language nodejs -out sdk/nodejs
//
// The languages a build generates are the generators table's keys, filled by
// the build's language files (see languages.go and languages_dotnet.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dmarc-partner/codegen/schemafile"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// The name the generated files' "do not edit" headers give as their author.
const tool = "pulumi-sdk-gen"

// A language's code generator: the SDK's files by path, relative to its root.
type generator func(pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error)

var generators = map[string]generator{}

// The -logo flag: a PNG file the .NET SDK ships as its package icon.
var logoPath string

func main() {
	schemafile.Main(tool, run)
}

func run(args []string) error {
	flags := flag.NewFlagSet(tool, flag.ContinueOnError)
	schemaPath := flags.String("schema", "", "the package's schema, a JSON file")
	language := flags.String("language", "", "the SDK's language, one of: "+strings.Join(schemafile.Languages(generators), ", "))
	out := flags.String("out", "", "the SDK's folder; whatever it held is removed first, as pulumi package gen-sdk does")
	flags.StringVar(&logoPath, "logo", "",
		"a PNG file for the .NET SDK's package icon, instead of downloading the schema's logoUrl (other languages ignore it)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *schemaPath == "" || *out == "" || flags.NArg() > 0 {
		return errors.New("usage: pulumi-sdk-gen -schema <schema.json> -language <language> -out <folder>")
	}
	generate, pkg, err := schemafile.Prepare(tool, generators, *language, *schemaPath)
	if err != nil {
		return err
	}
	files, err := generate(pkg, schemafile.Loader{Tool: tool, Package: pkg})
	if err != nil {
		return fmt.Errorf("generating the %s SDK of %s: %w", *language, pkg.Name, err)
	}
	return write(*out, files)
}

func write(out string, files map[string][]byte) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for name, content := range files {
		target := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
