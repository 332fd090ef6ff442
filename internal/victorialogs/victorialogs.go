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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/toolbin"
)

// Package is the main package that is built.
const Package = "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"

// ModuleDir is the directory of the tool module, integration/victorialogs,
// found from this file's own path: `go run` and `go test` compile from the
// checkout, so the path the compiler recorded is where the module is. A
// binary built with -trimpath or moved elsewhere has no such path, and
// says so.
func ModuleDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("cannot find the zaplens checkout from this binary (built with -trimpath?); run it with `go run ./example` from the checkout")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "integration", "victorialogs")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("the VictoriaLogs tool module is not where the checkout should have it: %w", err)
	}
	return dir, nil
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
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, Package)
	cmd.Dir = moduleDir
	// A go.work of the user's would pull the tool module into a workspace
	// it was not resolved for.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s failed after %v (it needs the Go module proxy the first time): %w\n%s",
			Package, moduleDir, time.Since(start).Round(time.Second), err, output.String())
	}
	return os.Rename(tmp, out)
}
