package otlplog

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/zaplens/zaplens"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap"
)

// A cut record carries zaplens.cut=true even when its attributes already
// fill the count limit: the marker takes the last slot, and the attribute
// it displaces is counted as dropped, as the limit drops any other. The
// direct way (string fields), the general way (a repeated key) and the
// OTel API each reach the cut.
func TestCutMarkerKeptAtCountLimit(t *testing.T) {
	huge := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		name string
		log  func(p *LoggerProvider)
	}{
		{"direct", func(p *LoggerProvider) {
			zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info(huge, zap.String("a", "1"), zap.String("b", "2"), zap.String("c", "3"))
		}},
		{"general", func(p *LoggerProvider) {
			zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info(huge, zap.String("a", "1"), zap.String("b", "2"),
				zap.String("c", "0"), zap.String("c", "3"))
		}},
		{"OTel API", func(p *LoggerProvider) {
			var r log.Record
			r.SetBody(attribute.StringValue(huge))
			r.AddAttributes(attribute.String("a", "1"), attribute.String("b", "2"), attribute.String("c", "3"))
			p.Logger("test").Emit(context.Background(), r)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			exp := &memExporter{}
			p := newTestProvider(t, withExporter(exp), WithRequestBytes(64<<10), WithAttributeCountLimit(3))
			tc.log(p)
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if s := p.Stats(); s.Cut != 1 || s.Exported != 1 {
				t.Fatalf("stats %+v, want one record, cut and exported", s)
			}
			r := exp.Records[0]
			var keys []string
			marked := false
			for _, kv := range r.Attributes {
				keys = append(keys, kv.Key)
				marked = marked || kv.Key == keyCut && kv.Value.GetBoolValue()
			}
			if !marked || len(keys) != 3 || r.DroppedAttributesCount != 1 {
				t.Errorf("attributes %v, %d dropped; want 3 of them, the last zaplens.cut=true, and 1 dropped", keys, r.DroppedAttributesCount)
			}
		})
	}
}

// With room under the limit, the marker is added, and nothing is dropped.
func TestCutMarkerUnderCountLimit(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp), WithRequestBytes(64<<10))
	zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info(strings.Repeat("x", 100<<10), zap.String("a", "1"))
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := exp.Records[0]
	if len(r.Attributes) != 2 || r.Attributes[1].Key != keyCut || r.DroppedAttributesCount != 0 {
		t.Errorf("attributes %v, %d dropped; want a, then zaplens.cut, none dropped", r.Attributes, r.DroppedAttributesCount)
	}
}

// A record whose keys alone overflow a request keeps as many attributes as
// fit, the marker among them.
func TestCutMarkerKeptWhenAttributesAreCut(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp), WithRequestBytes(64<<10))
	fields := make([]zap.Field, 100)
	for i := range fields {
		fields[i] = zap.Int(strings.Repeat("k", 1000)+strconv.Itoa(i), i)
	}
	zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info("m", fields...)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := exp.Records[0]
	n := len(r.Attributes)
	if n == 0 || n == 100 || r.Attributes[n-1].Key != keyCut || int(r.DroppedAttributesCount) != 100-(n-1) {
		t.Errorf("%d attributes, the last zaplens.cut: %v, %d dropped; want fewer than 100, the last zaplens.cut, the rest dropped",
			n, n > 0 && r.Attributes[n-1].Key == keyCut, r.DroppedAttributesCount)
	}
}
