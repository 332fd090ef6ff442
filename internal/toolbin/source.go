package toolbin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// InCheckout is the path rel (slash separated, e.g. "deploy/builder-config.yaml")
// inside the zaplens checkout, found from this file's own path: `go run`
// and `go test` compile from the checkout, so the path the compiler
// recorded is where it is. A binary built with -trimpath or moved
// elsewhere has no such path, and says so; so does a checkout without rel.
func InCheckout(rel string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("cannot find the zaplens checkout from this binary (built with -trimpath?); run it with `go run` or `go test` from the checkout")
	}
	path := filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s is not where the checkout should have it: %w", rel, err)
	}
	return path, nil
}

// Go runs the go command with args in dir, for a build of what (a name for
// the error), keeping its output for the error it returns should it fail.
func Go(ctx context.Context, dir, what string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	// A go.work of the user's would pull the module built into a
	// workspace it was not resolved for.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed after %v (it needs the Go module proxy the first time): %w\n%s",
			what, time.Since(start).Round(time.Second), err, output.String())
	}
	return nil
}
