//go:build dotnet

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// .NET's generator left pkg/v3 for pulumi-dotnet's own module, which the
// module proxy does not serve; this build is against the last pkg/v3 that
// still has it (scripts/project.mjs names the version), where it was frozen
// before the move.
func init() {
	generators["dotnet"] = func(pkg *schema.Package, _ schema.ReferenceLoader) (map[string][]byte, error) {
		http.DefaultClient.Transport = logoTransport{}
		return dotnet.GeneratePackage(tool, pkg, nil, nil)
	}
}

// The generator's one request is for the package icon (logo.png): the
// schema's logoUrl, else Pulumi's logo on GitHub. -logo answers it from a
// file; without it the download is tried, and its failure says what to do.
type logoTransport struct{}

func (logoTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	if logoPath == "" {
		response, err := http.DefaultTransport.RoundTrip(request)
		if err != nil {
			return nil, fmt.Errorf("downloading the .NET package icon (give -logo <png file> to use a local one): %w", err)
		}
		return response, nil
	}
	content, err := os.ReadFile(logoPath)
	if err != nil {
		return nil, fmt.Errorf("-logo: %w", err)
	}
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"image/png"}},
		Body:          io.NopCloser(bytes.NewReader(content)),
		ContentLength: int64(len(content)),
		Request:       request,
	}, nil
}
