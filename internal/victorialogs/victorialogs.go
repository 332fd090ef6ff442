// Package victorialogs builds and runs VictoriaLogs, a log database that
// takes OTLP/HTTP, as a real process on 127.0.0.1, for the example's
// -victorialogs mode and the integration tests.
//
// VictoriaLogs is built from Go modules in its own tool module,
// integration/victorialogs, so that its large dependency graph enters
// neither the root go.mod nor the integration one. The binary is built once
// into the user's cache directory, under a name derived from that module's
// go.mod and go.sum, and reused by every later run, test or example.
package victorialogs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zaplens/zaplens/internal/toolbin"
)

// Package is the main package that is built.
const Package = "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"

// ModuleDir is the directory of the tool module, integration/victorialogs,
// in the checkout.
func ModuleDir() (string, error) {
	gomod, err := toolbin.InCheckout("integration/victorialogs/go.mod")
	if err != nil {
		return "", err
	}
	return filepath.Dir(gomod), nil
}

// Version is the VictoriaLogs version the tool module requires, read from
// its go.mod, e.g. "v1.52.1".
func Version(moduleDir string) (string, error) {
	mod, err := os.ReadFile(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/VictoriaMetrics/VictoriaLogs" {
			return f[1], nil
		}
	}
	return "", errors.New("the tool module's go.mod does not require github.com/VictoriaMetrics/VictoriaLogs")
}

// Binary returns the path of the VictoriaLogs binary, building it on first
// use. progress, if not nil, hears that a build starts, since a cold one
// takes minutes.
func Binary(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := ModuleDir()
	if err != nil {
		return "", err
	}
	version, err := Version(dir)
	if err != nil {
		return "", err
	}
	bin, err := cachedPath(dir, version)
	if err != nil {
		return "", err
	}
	return toolbin.Get(bin, progress, "VictoriaLogs "+version, "once; about a minute with the modules downloaded, a few more without",
		func(out string) error { return Build(ctx, dir, out) })
}

// cachedPath names the binary after the version and a hash of the tool
// module's go.mod and go.sum, so that changing either builds afresh and two
// checkouts at different versions do not share a binary.
func cachedPath(moduleDir, version string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(moduleDir, name))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return toolbin.Path("victoria-logs-" + version + "-" + hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// Build runs `go build -o out` for Package inside moduleDir. It builds to a
// temporary name and renames, so that a concurrent run never starts a half
// written binary.
func Build(ctx context.Context, moduleDir, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	defer os.Remove(tmp)
	if err := toolbin.Go(ctx, moduleDir, "go build "+Package+" in "+moduleDir, "build", "-o", tmp, Package); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
