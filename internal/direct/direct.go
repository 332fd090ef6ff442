// Package direct is the one seam between the bridge (package zaplens) and
// zaplens's pipeline (package otlplog): what the bridge needs of a
// provider's loggers to write a zap entry straight to OTLP bytes, with no
// log.Record on the way. Neither public package imports the other; the
// pipeline's provider and loggers implement these interfaces, and the
// bridge checks for them. Any other log.LoggerProvider keeps working
// through log.Record and Emit.
//
// The contract, as zapcore.Core's is, holds for every implementation:
// what the bridge hands over is complete, valid OTLP, and once a method
// returns, the implementation holds nothing of the caller's memory.
package direct

import (
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Provider is a log.LoggerProvider whose loggers take OTLP bytes.
type Provider interface {
	log.LoggerProvider

	// DirectLimits returns the limits every logger of the provider
	// encodes attributes with, for strings the bridge has made valid
	// UTF-8 itself (CheckUTF8 off), with the provider's redactor. They do
	// not change over the provider's life: the bridge encodes a
	// logger's With fields once with them.
	DirectLimits() otlpwire.Limits
}

// Logger is a log.Logger that takes records as OTLP bytes. Its methods
// are safe for concurrent use, and none blocks on the network.
type Logger interface {
	log.Logger

	// Open reports whether the logger takes records: true until its
	// provider shuts down. It is asked for every entry, and is cheap.
	Open() bool

	// Terms are what the logger asks of a record the bridge writes
	// itself. They do not change over the logger's life: the bridge
	// reads them once, when it first meets the logger.
	Terms() Terms

	// UID is the log.record.uid the provider gives a record observed at
	// t, set before its head is encoded. It is called only when
	// Terms().UIDs.
	UID(t time.Time) otlpwire.UID

	// Enqueue queues one record: OTLP bytes of a LogRecord, made by
	// otlpwire.AppendHead and AppendTail around attributes encoded with
	// Terms().Limits, of at most Terms().MaxRecordBytes, with unique
	// keys; cut says AppendAttributes cut its values, to be counted. The
	// bytes are copied before it returns.
	Enqueue(record []byte, cut bool)

	// EnqueueAttributes encodes rec with attrs, whose keys are unique at
	// the top and in every map and whose strings are valid UTF-8, into
	// buf's room, cuts the longest values of a record too large for any
	// request (and counts it), and queues it. It returns buf, grown, for
	// the caller to keep its room. rec is passed by value, as no pointer
	// given to an interface's method stays on the caller's stack.
	EnqueueAttributes(buf []byte, rec otlpwire.Record, attrs []attribute.KeyValue) []byte

	// AppendAttributes encodes rec with attrs as EnqueueAttributes does,
	// into buf's room, cut to fit any request, and returns it without
	// queueing it, and whether it was cut: for a record the bridge holds,
	// to queue later with Enqueue, as if queued now.
	AppendAttributes(buf []byte, rec otlpwire.Record, attrs []attribute.KeyValue) (record []byte, cut bool)
}

// Terms are a Logger's terms for a record the bridge writes itself.
type Terms struct {
	// Direct says the bridge may write the whole record itself, with
	// Enqueue: false for a logger whose records carry more than the
	// bridge knows (a scope past the provider's bound, whose name each
	// record carries), which takes records by EnqueueAttributes only.
	Direct bool
	// Limits are the provider's DirectLimits.
	Limits otlpwire.Limits
	// MaxRecordBytes is the largest record Enqueue takes.
	MaxRecordBytes int
	// UIDs says each record gets a log.record.uid, from UID.
	UIDs bool
}

// Keys of the attributes zap derives from a field, which redaction by a
// key covers, and of the exception the bridge makes of zap.Error.
const (
	ErrorKey            = "error"
	KeyExceptionMessage = "exception.message"
)

// RedactedKeys are keys with the keys zap derives from them, which a
// provider's redaction covers with them: an error field's "<key>Verbose"
// (its %+v) and "<key>Causes" (a multi-error's), and "<key>Error", the
// text of a marshaler or Stringer that failed. zap.Error's text goes as
// exception.message: redacting "error" redacts it, and redacting
// exception.message redacts zap.Error's details.
func RedactedKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if k == "" {
			continue
		}
		out = append(out, k, k+"Verbose", k+"Causes", k+"Error")
		switch {
		case strings.EqualFold(k, ErrorKey):
			out = append(out, KeyExceptionMessage)
		case strings.EqualFold(k, KeyExceptionMessage):
			out = append(out, ErrorKey+"Verbose", ErrorKey+"Causes")
		}
	}
	return out
}
