// Package otlpwire writes OpenTelemetry log records, scopes, resources and
// export requests straight as OTLP protobuf bytes, with no protobuf structs
// in between: the wire form of an ExportLogsServiceRequest, built by append.
package otlpwire
