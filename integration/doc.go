// Package integration runs zaplens end to end against the OpenTelemetry
// Collector's own OTLP receiver (go.opentelemetry.io/collector/receiver/otlpreceiver),
// started in-process on loopback.
//
// It is a separate module so that the library's go.mod does not carry the
// Collector's dependencies. Everything lives in _test.go files; the harness
// is in receiver_test.go (see StartReceiver).
package integration
