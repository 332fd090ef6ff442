module github.com/zaplens/zaplens

go 1.26.0

require (
	go.opentelemetry.io/otel/log v1.47.0
	go.uber.org/zap v1.28.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
)
