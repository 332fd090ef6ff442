package otlplog

import (
	"context"
	"strconv"
	"testing"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"
)

// Logger names made of unbounded values cost nothing retained when they
// are excluded, and a bounded number of scopes when bridged: past the
// bound, records go to one overflow scope and are still delivered.
func TestUnboundedLoggerNames(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	excluded := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p), zaplens.WithoutLoggerName("http"))).Named("http")
	for i := range 20000 {
		excluded.Named(strconv.Itoa(i)).Info("request")
	}
	p.mu.Lock()
	n := len(p.loggers)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("excluded names made %d loggers in the provider", n)
	}
	bridged := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Named("job")
	const names = maxProviderScopes + 1000
	for i := range names {
		bridged.Named(strconv.Itoa(i)).Info("step")
	}
	p.mu.Lock()
	n = len(p.loggers)
	p.mu.Unlock()
	if n > maxProviderScopes+1 {
		t.Errorf("%d loggers for %d names, want at most %d", n, names, maxProviderScopes+1)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	overflow := 0
	for i, s := range exp.Scopes {
		if s == overflowScope {
			overflow++
			if a := exp.Records[i].Attributes; a[len(a)-1].Key != keyScopeName || a[len(a)-1].Value.GetStringValue() == "" {
				t.Fatalf("overflowed record without its scope name: %v", a)
			}
		}
	}
	if exp.Len() != names || overflow != 1000 {
		t.Errorf("%d records delivered, %d in the overflow scope; want %d and 1000", exp.Len(), overflow, names)
	}
}
