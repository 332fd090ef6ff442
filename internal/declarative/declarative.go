// Package declarative is the hook through which a reader of an
// OpenTelemetry declarative configuration file (OTEL_CONFIG_FILE) is
// registered, the Settings it hands zaplens's pipeline, and the part of
// the file the reader reads, in plain Go types.
//
// The pipeline (otlplog) takes Settings, values resolved and checked, and
// nothing else: the reader, which parses the file with otelconf (and so
// links the SDK's trace and metric exporters) and turns what it says into
// settings, lives in otlplog/configfile and registers itself when a
// program imports it. A program that does not import it pays for neither.
//
// Config and the types under it mirror the configuration schema's, field
// for field, keeping "absent" (nil) apart from "zero"; only the reader
// uses them.
package declarative

import (
	"context"
	"sync/atomic"
)

// A Loader reads a configuration file's bytes, substituting its ${VAR}
// references, into the Settings. Its error (a file that does not parse, a
// processor zaplens does not run) is told whatever the options say.
type Loader func(ctx context.Context, file []byte) (*Settings, error)

var loader atomic.Pointer[Loader]

// Register makes l the reader of configuration files, replacing any
// before it; nil unregisters it. otlplog/configfile calls it from init.
func Register(l Loader) {
	if l == nil {
		loader.Store(nil)
		return
	}
	loader.Store(&l)
}

// Registered returns the reader registered, nil if none is.
func Registered() Loader {
	if l := loader.Load(); l != nil {
		return *l
	}
	return nil
}
