package otlplog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens/internal/transport"
)

// The texts a user reads, pinned: the prefix once, the count in words,
// only the reasons that apply, and at Shutdown the cause once: in the
// error Shutdown returns, while the loss writer gets the tally.
func TestMessagesSayItOnce(t *testing.T) {
	cleanEnv(t)
	var buf lockedBuffer
	exp := &memExporter{Fail: errors.New("boom")}
	p := newTestProvider(t, withExporter(exp), WithLossWriter(&buf))
	l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	l.Info("x")
	if err := l.Sync(); err == nil || err.Error() != "zaplens: flush: 1 log record failed to export: boom" {
		t.Errorf("Sync: %v", err)
	}
	err := p.Shutdown(context.Background())
	var de *DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("Shutdown: %v, want a DeliveryError", err)
	}
	want := "zaplens: 1 of 1 log record was not delivered (1 failed to export); last export error, at " + de.ErrAt.Format("15:04:05") + ": boom"
	if err.Error() != want {
		t.Errorf("Shutdown:\n got %s\nwant %s", err, want)
	}
	if got, want := buf.String(), "zaplens: 1 of 1 log record was not delivered (1 failed to export)\n"; got != want {
		t.Errorf("loss writer:\n got %q\nwant %q", got, want)
	}
}

// A flush that runs out of time says so under one prefix.
func TestFlushTimeoutMessage(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	defer close(exp.Block)
	p := newTestProvider(t, withExporter(exp), WithExportTimeout(time.Second))
	defer shutdownWithin(p, 50*time.Millisecond)
	emit(p, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.ForceFlush(ctx); err == nil || err.Error() != "zaplens: flush: context deadline exceeded" {
		t.Errorf("ForceFlush: %v", err)
	}
}

// An export on a client Shutdown closed says so in words, and is not
// warned of: there is nothing to do about it, and the final report
// counts it.
func TestClosedClientMessage(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0")
	var buf lockedBuffer
	opts := []Option{WithEndpoint("http://" + srv.Addr), WithLossWriter(&buf)}
	p, err := NewLoggerProvider(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := newProviderConfig(opts)
	if err := c.resolveEnv(); err != nil {
		t.Fatal(err)
	}
	x, err := newExporter(&c, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = x.export(context.Background(), []byte{}, 1, true)
	if err == nil || err.Error() != "Shutdown closed the connection before the export ended" || !errors.Is(err, transport.ErrClosed) {
		t.Errorf("export on a closed client: %v", err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "export") {
		t.Errorf("loss writer has %q, want nothing", buf.String())
	}
}
