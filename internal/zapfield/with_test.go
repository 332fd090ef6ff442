package zapfield

import (
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// A logger's zap.Error, converted once by With, is each of its entries'
// exception and error (Err: log.Record's and the span event's), through a
// With made on top of it, and the stack beside it is exception.stacktrace;
// an entry's own zap.Error replaces it. The direct way leaves such a With
// to the general one, which alone sets Err.
func TestWithKeepsItsError(t *testing.T) {
	withErr, own := errors.New("from with"), errors.New("the entry's")
	e := GetEncoder()
	w := e.With(&With{}, []zapcore.Field{zap.Error(withErr)}, &otlpwire.DefaultLimits)
	PutEncoder(e)
	e = GetEncoder()
	on := e.With(&w, []zapcore.Field{zap.Int("n", 1)}, &otlpwire.DefaultLimits)
	PutEncoder(e)
	for _, tc := range []struct {
		name   string
		with   *With
		fields []zapcore.Field
		want   error
	}{
		{"With's", &w, nil, withErr},
		{"a With on top", &on, []zapcore.Field{zap.String("s", "x")}, withErr},
		{"the entry's own", &w, []zapcore.Field{zap.Error(own)}, own},
	} {
		if tc.with.Direct() {
			t.Errorf("%s: the direct way starts from a With holding an exception", tc.name)
		}
		e := GetEncoder()
		got := map[string]string{}
		for _, kv := range e.Attributes(tc.with, &zapcore.Entry{Stack: "goroutine 1"}, tc.fields) {
			got[string(kv.Key)] = kv.Value.AsString()
		}
		if e.Err() != tc.want || got[KeyExceptionMessage] != tc.want.Error() || got[KeyExceptionStack] == "" {
			t.Errorf("%s: Err %v, attributes %v; want %v, its message and exception.stacktrace", tc.name, e.Err(), got, tc.want)
		}
		PutEncoder(e)
	}
}
