// Package benchmarks measures what a zap line costs with zaplens, beside
// plain zap and the official OpenTelemetry bridge
// (go.opentelemetry.io/contrib/bridges/otelzap), on identical workloads in
// one process. Everything is in the _test.go files; run.sh runs it and prints
// one table, and docs/benchmarks.md in the repository root has the latest.
package benchmarks
