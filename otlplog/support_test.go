package otlplog

import (
	"context"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"

	"github.com/zaplens/zaplens/internal/testsupport"
)

// The helpers the bridge's tests share, under the names this package's
// tests have always used.
var (
	startOTLPServer = testsupport.StartOTLPServer
	keepRecords     = testsupport.KeepRecords
	withToken       = testsupport.WithToken
	withServerTLS   = testsupport.WithServerTLS
	freeAddr        = testsupport.FreeAddr
	testCerts       = testsupport.TestCerts
	cleanEnv        = testsupport.CleanEnv
	setEnv          = testsupport.Env
	eventually      = testsupport.Eventually
	shutdownWithin  = testsupport.ShutdownWithin
	childCommand    = testsupport.ChildCommand
)

type (
	otlpServer   = testsupport.OTLPServer
	memExporter  = testsupport.MemExporter
	lockedBuffer = testsupport.LockedBuffer
)

// withExporter sends the provider's requests to e instead of a collector.
func withExporter(e *memExporter) Option {
	return providerOptionFunc(func(c *providerConfig) { c.exportFunc = e.Export })
}

// withDiscardExport makes the provider's export discard its requests: the
// figures are then the whole pipeline's but the network's.
func withDiscardExport() Option {
	return providerOptionFunc(func(c *providerConfig) {
		c.exportFunc = func(context.Context, []byte, int, bool) (int, error) { return 0, nil }
	})
}

var (
	spanContext         = testsupport.SpanContext
	skipAllocsUnderRace = testsupport.SkipAllocsUnderRace
	jsonDiscard         = testsupport.JSONDiscard
	processCPU          = testsupport.ProcessCPU
)

const raceEnabled = testsupport.RaceEnabled

// caseOneFields are case 1's fields (the benchmarks' line): a context and
// five fields.
func caseOneFields(ctx context.Context) []zap.Field {
	return []zap.Field{zaplens.Context(ctx), zap.Int("step", 12), zap.Float64("loss", 0.41),
		zap.Float64("lr", 3e-4), zap.Int("tokens", 1<<20), zap.String("phase", "train")}
}
