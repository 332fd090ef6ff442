package zaplens

import (
	"context"
	"testing"

	"github.com/zaplens/zaplens/internal/exporthook"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// The helpers the pipeline's tests share, under the names this package's
// tests have always used.
var (
	startOTLPServer     = testsupport.StartOTLPServer
	keepRecords         = testsupport.KeepRecords
	cleanEnv            = testsupport.CleanEnv
	setEnv              = testsupport.Env
	eventually          = testsupport.Eventually
	shutdownWithin      = testsupport.ShutdownWithin
	childCommand        = testsupport.ChildCommand
	spanContext         = testsupport.SpanContext
	skipAllocsUnderRace = testsupport.SkipAllocsUnderRace
	jsonDiscard         = testsupport.JSONDiscard
	processCPU          = testsupport.ProcessCPU
)

type (
	otlpServer   = testsupport.OTLPServer
	memExporter  = testsupport.MemExporter
	lockedBuffer = testsupport.LockedBuffer
)

// withExporter sends the provider's requests to e instead of a collector.
func withExporter(e *memExporter) otlplog.Option {
	return exporthook.WithExport(e.Export).(otlplog.Option)
}

// withDiscardExport makes the provider's export discard its requests: the
// figures are then the whole pipeline's but the network's.
func withDiscardExport() otlplog.Option {
	return exporthook.WithExport(func(context.Context, []byte, int, bool) (int, error) { return 0, nil }).(otlplog.Option)
}

// newTestProvider is zaplens's provider with opts, telling nothing.
func newTestProvider(t *testing.T, opts ...otlplog.Option) *otlplog.LoggerProvider {
	t.Helper()
	p, err := otlplog.NewLoggerProvider(context.Background(), append([]otlplog.Option{otlplog.WithLossWriter(nil)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
