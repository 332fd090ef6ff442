package otlplog

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens/internal/testsupport/childproc"
)

const exitChildEnv = "ZAPLENS_EXIT_CHILD"

// exitChild is the README's quick start, with a collector that is not
// there: it logs one line, says so on stdout, then runs its defers.
func exitChild(endpoint string) {
	ctx := context.Background()
	provider, err := NewLoggerProvider(ctx, WithEndpoint(endpoint), WithLossWriter(os.Stderr))
	if err != nil {
		panic(err)
	}
	defer provider.Shutdown(context.Background())
	logger := zap.NewNop().WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
	defer logger.Sync()
	logger.Info("step done", zap.Int("step", 12))
	os.Stdout.WriteString("logged\n")
}

// A program that logs and exits with no collector listening exits within a
// second of its last line; with one that accepts connections and never
// answers, within the Sync bound and a second more.
func TestExitWithoutCollector(t *testing.T) {
	if ep := os.Getenv(exitChildEnv); ep != "" {
		exitChild(ep)
		return
	}
	if raceEnabled {
		t.Skip("exit times under the race detector say nothing of a real program's")
	}
	refused := freeAddr(t)
	silent := hungCollector(t)
	for _, tc := range []struct {
		name     string
		endpoint string
		within   time.Duration
	}{
		{"refused", "http://" + refused, time.Second},
		{"never answers", "http://" + silent, 6 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, stderr := timeChildExit(t, tc.endpoint)
			if d > tc.within {
				t.Errorf("exited %v after its last line, want within %v; stderr:\n%s", d, tc.within, stderr)
			}
			if !strings.Contains(stderr, "zaplens: 1 of 1 log record was not delivered") {
				t.Errorf("no word of the loss on stderr:\n%s", stderr)
			}
			t.Logf("exit %v after the last line; stderr:\n%s", d.Round(time.Millisecond), stderr)
		})
	}
}

// timeChildExit runs the child against endpoint and measures from its
// "logged" line to its exit.
func timeChildExit(t *testing.T, endpoint string) (time.Duration, string) {
	cmd := childCommand("TestExitWithoutCollector", exitChildEnv+"="+endpoint)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	p := childproc.Start(t, cmd, func(problem string) string {
		return fmt.Sprintf("exit child: %s; stderr:\n%s", problem, stderr.String())
	})
	p.Expect("logged")
	logged := time.Now()
	if err := p.Cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	return time.Since(logged), stderr.String()
}
