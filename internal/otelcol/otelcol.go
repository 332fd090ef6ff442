// Package otelcol builds the OpenTelemetry Collector of deploy/'s builder
// manifest, cached, and runs it as a real process, for the tier's tests
// and the example's -tier mode.
package otelcol

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zaplens/zaplens/internal/toolbin"
)

// Builder is the Collector's builder, run with `go run`: a tool, never a
// dependency of any go.mod of the project.
const Builder = "go.opentelemetry.io/collector/cmd/builder@v0.165.0"

// Refused are the manifest's modules that the Go module proxy refuses
// ("403 Forbidden: This module version is not available", checked with
// `go list -m` on 2026-12-05): the build leaves them out, and a
// configuration that uses them cannot run on what is built.
var Refused = []string{
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter",
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter",
}

// ManifestPath is deploy/builder-config.yaml in the checkout.
func ManifestPath() (string, error) {
	return toolbin.InCheckout("deploy/builder-config.yaml")
}

// Manifest is the builder manifest at path without the Refused modules,
// writing to outDir.
func Manifest(path, outDir string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for line := range strings.Lines(string(b)) {
		field := strings.TrimSpace(line)
		if refused(field) {
			continue
		}
		if strings.HasPrefix(field, "output_path:") {
			line = strings.Replace(line, strings.TrimPrefix(field, "output_path:"), " "+outDir, 1)
		}
		out.WriteString(line)
	}
	return out.Bytes(), nil
}

func refused(manifestLine string) bool {
	for _, m := range Refused {
		if strings.HasPrefix(manifestLine, "- gomod: "+m+" ") {
			return true
		}
	}
	return false
}

// Binary returns the path of the Collector built from deploy/'s manifest,
// building it on first use into the user's cache directory, under a name
// derived from the manifest. progress, if not nil, hears that a build
// starts, since a cold one takes minutes.
func Binary(ctx context.Context, progress io.Writer) (string, error) {
	path, err := ManifestPath()
	if err != nil {
		return "", err
	}
	// The manifest is hashed as written, with a fixed output directory:
	// the cache's own path must not change the name.
	key, err := Manifest(path, "-")
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append(key, Builder...))
	bin := toolbin.Path("zaplens-otelcol-" + hex.EncodeToString(h[:])[:12])
	return toolbin.Get(bin, progress, "the Collector of deploy/builder-config.yaml", "once; a few minutes",
		func(out string) error { return Build(ctx, path, out) })
}

// Build runs the builder on the manifest at path, less the Refused
// modules, in a temporary directory, and moves the binary to out, so that
// a concurrent run never starts a half written one.
func Build(ctx context.Context, path, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(filepath.Dir(out), "otelcol-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	manifest, err := Manifest(path, filepath.Join(work, "src"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "manifest.yaml"), manifest, 0o644); err != nil {
		return err
	}
	if err := toolbin.Go(ctx, work, "the Collector's builder", "run", Builder, "--config", "manifest.yaml"); err != nil {
		return err
	}
	return os.Rename(filepath.Join(work, "src", "zaplens-otelcol"), out)
}
