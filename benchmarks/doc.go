// Package benchmarks measures what a zap line costs with zaplens, beside
// plain zap and the official OpenTelemetry bridge
// (go.opentelemetry.io/contrib/bridges/otelzap).
//
// BenchmarkCall and BenchmarkBusyRank run each bridge on its own default
// pipeline, exporting over OTLP/gRPC to cmd/otlpsink, a receiver that
// decodes every request as a collector does, in another process; they
// report the whole process's CPU per delivered line, its allocations and
// its peak heap. BenchmarkLine and BenchmarkLever run cases 1 to 7 in one
// process, every bridge on one sdk/log provider of the user's own.
// Everything is in the _test.go files; run.sh runs it and prints the
// tables, and docs/performance.md in the repository root has the latest:
// its summary, and links to the pages with every table
// (docs/benchmark-results.md, docs/benchmark-call-time.md,
// docs/benchmark-own-provider.md) and the method (docs/benchmark-method.md).
package benchmarks
