package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

type e2ePanicStringer struct{}

func (e2ePanicStringer) String() string { panic("stringer exploded") }

type e2eNilStringer struct{ name string }

func (s *e2eNilStringer) String() string { return s.name } // panics on a nil receiver

type e2ePanicObject struct{}

func (e2ePanicObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("before", "x")
	panic("object exploded")
}

type e2eNilObject struct{ n int }

func (o *e2eNilObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddInt("n", o.n) // panics on a nil receiver
	return nil
}

type e2ePanicArray struct{}

func (e2ePanicArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	enc.AppendInt(1)
	panic("array exploded")
}

type e2ePanicError struct{}

func (e2ePanicError) Error() string { panic("error exploded") }

type e2ePanicJSON struct{}

func (e2ePanicJSON) MarshalJSON() ([]byte, error) { panic("json exploded") }

type e2eNode struct {
	Name string
	Next *e2eNode
}

// TestBadInput: hostile values never panic out of the bridge and never take
// the pipeline down; each record arrives, with what it could keep. Each
// case is flushed on its own, so a case that broke its export batch cannot
// hide behind another.
//
// The arrival checks log through the bridge alone (NewCore): zap's own JSON
// encoder lets a panicking marshaler's panic through, and a tee must not
// hide the user's core's behaviour. "tee is transparent" checks that NewTee
// panics exactly where plain zap with the same core does.
func TestBadInput(t *testing.T) {
	r := StartReceiver(t)
	p, _ := e2eProvider(t, r)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)), zap.AddCaller())

	big := strings.Repeat("x", 1<<20)
	deep := map[string]any{"leaf": 1}
	for i := 0; i < 1000; i++ {
		deep = map[string]any{"d": deep}
	}
	cyc := &e2eNode{Name: "a"}
	cyc.Next = &e2eNode{Name: "b", Next: cyc}
	cycMap := map[string]any{}
	cycMap["self"] = cycMap
	var nilCtx context.Context
	var nilStringer fmt.Stringer
	many := make([]zap.Field, 0, 1000)
	for i := 0; i < 1000; i++ {
		many = append(many, zap.Int(fmt.Sprintf("f%04d", i), i))
	}

	type tc struct {
		name  string
		log   func(l *zap.Logger, c zap.Field)
		check func(t *testing.T, rec Record)
	}
	has := func(keys ...string) func(*testing.T, Record) {
		return func(t *testing.T, rec Record) {
			for _, k := range keys {
				if _, ok := rec.Attrs[k]; !ok {
					t.Errorf("no attribute %q: %v", k, trimAttrs(rec.Attrs))
				}
			}
		}
	}
	validUTF8 := func(t *testing.T, rec Record) {
		if !utf8.ValidString(rec.BodyString) {
			t.Errorf("body is not valid UTF-8: %q", rec.BodyString)
		}
		for k, v := range rec.Attrs {
			if !utf8.ValidString(k) || !utf8.ValidString(fmt.Sprint(v)) {
				t.Errorf("attribute %q=%q is not valid UTF-8", k, v)
			}
		}
	}
	cases := []tc{
		{"utf8 body", func(l *zap.Logger, c zap.Field) { l.Info("bad \xff\xfe body", c) }, validUTF8},
		{"utf8 value", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.String("v", "a\xffb")) }, func(t *testing.T, rec Record) {
			validUTF8(t, rec)
			has("v")(t, rec)
		}},
		{"utf8 key", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.String("k\xff", "v")) }, validUTF8},
		{"utf8 bytestring", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.ByteString("bs", []byte{'o', 0xff, 'k'})) }, validUTF8},
		{"1 MiB string", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.String("big", big)) }, func(t *testing.T, rec Record) {
			if s, _ := rec.Attrs["big"].(string); len(s) != 1<<20 {
				t.Errorf("big: %d bytes arrived, want %d", len(s), 1<<20)
			}
		}},
		{"1 MiB message", func(l *zap.Logger, c zap.Field) { l.Info(big, c) }, func(t *testing.T, rec Record) {
			if len(rec.BodyString) != 1<<20 {
				t.Errorf("body: %d bytes arrived, want %d", len(rec.BodyString), 1<<20)
			}
		}},
		{"deep reflect", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Reflect("deep", deep)) }, has("deep")},
		{"cyclic reflect", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Reflect("cyc", cyc)) }, has("cycError")},
		{"cyclic map", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Any("cm", cycMap)) }, has("cmError")},
		{"nil pointer stringer", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Stringer("ns", (*e2eNilStringer)(nil))) }, has("ns")},
		{"nil interfaces", func(l *zap.Logger, c zap.Field) {
			l.Info("m", c, zap.Any("nilany", nil), zap.Reflect("nilref", nil), zap.Error(nil), zap.Stringer("nilstr", nilStringer), zap.Inline(nil))
		}, nil},
		{"nil pointer object", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Object("no", (*e2eNilObject)(nil))) }, nil},
		{"nil pointer error", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Error((*e2eNilErr)(nil))) }, nil},
		{"nil context", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zaplens.Context(nilCtx)) }, nil},
		{"panicking stringer", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Stringer("boom", e2ePanicStringer{})) }, has("boomError")},
		{"panicking object", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Object("pobj", e2ePanicObject{})) }, has("pobjError")},
		{"panicking array", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Array("parr", e2ePanicArray{})) }, has("parrError")},
		{"panicking error", func(l *zap.Logger, c zap.Field) {
			l.Info("m", c, zap.Error(e2ePanicError{}), zap.NamedError("e2", e2ePanicError{}))
		}, nil},
		{"panicking MarshalJSON", func(l *zap.Logger, c zap.Field) { l.Info("m", c, zap.Reflect("pj", e2ePanicJSON{})) }, has("pjError")},
		{"panicking With", func(l *zap.Logger, c zap.Field) {
			l.With(zap.Stringer("wboom", e2ePanicStringer{}), zap.Object("wobj", e2ePanicObject{})).Info("m", c)
		}, has("wboomError", "wobjError")},
		{"1000 fields", func(l *zap.Logger, c zap.Field) { l.Info("m", append([]zap.Field{c}, many...)...) }, func(t *testing.T, rec Record) {
			t.Logf("%d of 1001 attributes arrived (the SDK's count limit is 128 by default)", len(rec.Attrs))
		}},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := r.Count()
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				c.log(logger, zap.String("case", c.name))
			}()
			select {
			case v := <-done:
				if v != nil {
					t.Fatalf("logging call panicked: %v", v)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("logging call still running after 10s")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			ferr := p.ForceFlush(ctx)
			cancel()
			var rec *Record
			for _, x := range r.Records()[before:] {
				if x.Attrs["case"] == c.name {
					rec = &x
				}
			}
			if rec == nil {
				t.Fatalf("the record did not arrive (ForceFlush: %v; stats %s)", ferr, p.Stats())
			}
			if ferr != nil {
				t.Errorf("ForceFlush: %v", ferr)
			}
			if c.check != nil {
				c.check(t, *rec)
			}
			t.Logf("arrived: body %d bytes, attributes %v", len(rec.BodyString), trimAttrs(rec.Attrs))
		})
	}

	// The pipeline still works after all that.
	logger.Info("still alive", zap.String("case", "sentinel"))
	e2eFlush(t, p)
	if recs := r.Records(); len(recs) == 0 || recs[len(recs)-1].BodyString != "still alive" {
		t.Errorf("the sentinel did not arrive last")
	}
	if st := p.Stats(); st.Lost() != 0 {
		t.Errorf("records lost: %s", st)
	}

	t.Run("one invalid UTF-8 line among 100", func(t *testing.T) {
		r := StartReceiver(t)
		p, _ := e2eProvider(t, r)
		l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
		for i := 0; i < 100; i++ {
			msg := "good line"
			if i == 50 {
				msg = "bad \xff line"
			}
			l.Info(msg, zap.Int("i", i))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ferr := p.ForceFlush(ctx)
		cancel()
		if r.Count() < 99 {
			t.Errorf("%d of 100 records arrived: one invalid UTF-8 string sank its whole export batch (ForceFlush: %v; stats %s)", r.Count(), ferr, p.Stats())
		}
	})

	t.Run("tee is transparent", func(t *testing.T) {
		r := StartReceiver(t)
		p, _ := e2eProvider(t, r)
		plain := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(e2eDiscard{}), zapcore.DebugLevel))
		tee := e2eLogger(p, e2eDiscard{})
		panics := func(l *zap.Logger, c tc) (v any) {
			defer func() { v = recover() }()
			c.log(l, zap.String("case", "tee "+c.name))
			return nil
		}
		for _, c := range cases {
			bp, tp := panics(plain, c), panics(tee, c)
			switch {
			case tp != nil && bp == nil:
				t.Errorf("%s: the tee panics (%v) where plain zap does not", c.name, tp)
			case tp == nil && bp != nil:
				t.Logf("%s: plain zap panics (%v), the tee does not", c.name, bp)
			case bp != nil:
				t.Logf("%s: plain zap's JSON core panics (%v), and so does the tee", c.name, bp)
			}
		}
	})

	t.Run("value length limit", func(t *testing.T) {
		r := StartReceiver(t)
		p, _ := e2eProvider(t, r, otlplog.WithAttributeValueLengthLimit(1024))
		e2eLogger(p, &testsupport.LockedBuffer{}).Info("limited", zap.String("big", big))
		e2eFlush(t, p)
		recs := r.Records()
		if len(recs) != 1 {
			t.Fatalf("received %d records", len(recs))
		}
		if s, _ := recs[0].Attrs["big"].(string); len(s) != 1024 {
			t.Errorf("big arrived with %d bytes, want the limit, 1024", len(s))
		}
	})
}

type e2eNilErr struct{ msg string }

func (e *e2eNilErr) Error() string { return e.msg } // panics on a nil receiver

// trimAttrs shortens long values for the test log.
func trimAttrs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		s := fmt.Sprint(v)
		if len(s) > 80 {
			out[k] = fmt.Sprintf("%.80s…(%d bytes)", s, len(s))
		} else {
			out[k] = v
		}
	}
	return out
}
