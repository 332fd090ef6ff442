package zaplens

import (
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/internal/otlpwire"
)

// WithRedactKeys's promise covers every way a redacted value may leave:
// the provider's encoder redacts by key on both ways and in what other
// code emits; the bridge redacts what it sends around the encoder (span
// events) and what it makes into text before any key can be seen (the
// JSON of values past the depth bound). The keys zap derives from a
// field's key carry that field's text, and are redacted with it
// (direct.RedactedKeys). The JSON text is redacted where it is made, in
// internal/zapfield (its redact.go).

// redactSource is the redactor of a bridge's provider: a zaplens
// provider's (a direct.Provider), known when the core is built. A core built on otel's global
// provider before the program set it holds the global's delegate, which
// forwards to the provider set first, "updated in place": its redactor is
// looked up at the first entry after the global is set.
type redactSource struct {
	r        atomic.Pointer[otlpwire.Redactor]
	pending  atomic.Bool        // delegate has nothing set behind it yet
	delegate log.LoggerProvider // the global's delegate, while pending
}

// globalDelegate is the package of the type otel.GetLoggerProvider returns
// before a provider is set.
const globalDelegate = "go.opentelemetry.io/otel/internal/global"

func (s *redactSource) init(p log.LoggerProvider) {
	if zp, ok := p.(direct.Provider); ok {
		s.r.Store(zp.DirectLimits().Redact)
		return
	}
	if t := reflect.TypeOf(p); t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == globalDelegate {
		s.delegate = p
		s.pending.Store(true)
	}
}

// get returns the redactor, nil for none: one atomic load, two while the
// global provider is not set.
func (s *redactSource) get() *otlpwire.Redactor {
	if s.pending.Load() {
		s.resolve()
	}
	return s.r.Load()
}

// resolve looks the redactor up once the global provider is set.
func (s *redactSource) resolve() {
	p := otel.GetLoggerProvider()
	if p == s.delegate {
		return // not set yet
	}
	if zp, ok := p.(direct.Provider); ok {
		s.r.Store(zp.DirectLimits().Redact)
	}
	s.pending.Store(false)
}
