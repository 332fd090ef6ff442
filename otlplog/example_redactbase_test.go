package otlplog_test

import (
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// redactCore wraps the program's own core so that the top-level fields
// named by keys (ignoring case), from the call and from With, are printed
// as "[redacted]". It does not look inside objects, maps or namespaces.
type redactCore struct {
	zapcore.Core
	keys []string
}

func (c redactCore) redact(fields []zapcore.Field) []zapcore.Field {
	out := fields
	for i, f := range fields {
		for _, k := range c.keys {
			if strings.EqualFold(f.Key, k) {
				if &out[0] == &fields[0] {
					out = append([]zapcore.Field(nil), fields...) // never change the caller's slice
				}
				out[i] = zap.String(f.Key, "[redacted]")
			}
		}
	}
	return out
}

func (c redactCore) With(fields []zapcore.Field) zapcore.Core {
	return redactCore{c.Core.With(c.redact(fields)), c.keys}
}

func (c redactCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c redactCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.Core.Write(ent, c.redact(fields))
}

// otlplog.WithRedactKeys leaves the tee's base, the program's own core, alone; a
// wrapper around that core redacts its output too.
func ExampleWithRedactKeys_base() {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "" // a stable line for the example
	base := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(os.Stdout), zapcore.InfoLevel)
	keys := []string{"password"}
	logger := zap.New(zaplens.NewTee(redactCore{base, keys} /* zaplens.WithLoggerProvider(a provider otlplog.WithRedactKeys(keys...)) */))
	logger.With(zap.String("Password", "with")).Info("login", zap.String("user", "ann"), zap.String("password", "hunter2"))
	// Output:
	// {"level":"info","msg":"login","Password":"[redacted]","user":"ann","password":"[redacted]"}
}
