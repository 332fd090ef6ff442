// Package integration runs zaplens end to end against the OpenTelemetry
// Collector's own OTLP receiver (go.opentelemetry.io/collector/receiver/otlpreceiver),
// started in-process on loopback, OTLP/gRPC and OTLP/HTTP, with the
// Collector's default limits.
//
// It is a separate module so that the library's go.mod does not carry the
// Collector's dependencies. Everything lives in _test.go files; the harness
// is in receiver_test.go (see StartReceiver), the proxies that can stand in
// front of it in proxy_test.go, and the library defects the tests know
// about in FINDINGS.md (see defects_test.go).
package integration
