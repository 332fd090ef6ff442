// Package zapfield converts zap fields, once, for both of the bridge's
// outputs: OTel attributes (the general way, any log.LoggerProvider) and
// OTLP protobuf bytes (the direct way, zaplens's own pipeline).
//
// [Walk] is the one switch over zap's field types. It reads each field as
// zap's Field.AddTo reads it (integers cut to their width, a time in its
// location, a Stringer's or an error's user code run once and guarded)
// and hands the value to a [Leaves], whose methods write it to one output.
// As log/slog's handler state walks a record's attributes and its
// appenders write them, no output decides what a field means, and no
// field type is added to one output and forgotten in the other.
//
// Leaves is a type parameter's constraint, not an interface value: each
// output's Leaves is a distinct non-pointer type, so Walk is compiled once
// per output (see the benchmark figures in the root's wire.go).
package zapfield
