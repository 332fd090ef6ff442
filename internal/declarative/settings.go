package declarative

import (
	"time"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/zaplens/zaplens/internal/confval"
)

// Settings are what a configuration file sets of the pipeline, each value
// resolved and checked as far as it can be without the options (the
// certificate files are not read: ExporterSettings.TLS): the pipeline
// gives a setting no option set the file's value (a Value), and tells the
// error of a value only then, as an option replaces it unread.
// The errors that do not depend on an option (Exporter.Refused,
// ResourceErr) are told whatever the options say. Errors name the file's
// key, not the file, which the pipeline adds.
type Settings struct {
	Disabled bool // disabled: true, or no logger_provider: nothing more is set

	// logger_provider.processors[0].batch
	QueueSize, BatchSize         Value[int]
	ScheduleDelay, ExportTimeout Value[time.Duration]
	Exporter                     ExporterSettings

	// logger_provider.limits, else attribute_limits
	AttributeCount, AttributeValueLength Value[int]

	// The resource section, built as otelconf builds it, and why it could
	// not be.
	Resource    *resource.Resource
	ResourceErr error
}

// ExporterSettings are what the file sets of the batch processor's
// exporter.
type ExporterSettings struct {
	// Refused says why the file gives no exporter zaplens runs, or more
	// than one.
	Refused error
	// Name is "otlp" or "console", at the exporter's key; its Err refuses
	// the exporter's kind (OTLP/HTTP with JSON). An option that chose the
	// exporter leaves the file's unread: the rest too.
	Name                            Value[string]
	Protocol, Endpoint, Compression Value[string]
	Timeout                         Value[time.Duration]
	Headers                         Value[map[string]string]
	// TLS is the tls section's files, named by their keys, unread: the
	// pipeline loads them only for a setting no option set, so that a
	// file an option replaced (missing, unreadable, on a slow mount) is
	// not read, as the certificate variables are not.
	TLS Value[confval.TLSFiles]
}

// Value is a value the file gives a setting, at its key, or the error
// that refuses it.
type Value[T any] struct {
	At  string // its key, for messages; "": the file does not give it
	V   T
	Err error // why V cannot be used, naming At
}
