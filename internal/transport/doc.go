// Package transport sends encoded OTLP log export requests over gRPC or HTTP,
// with the OTLP spec's retries, and reads the collector's answer.
//
// The bodies it sends are serialized ExportLogsServiceRequest messages made
// elsewhere; this package never encodes records. [New] builds a [Client] for
// a [Config]; [Client.Export] returns a [Result] that says how many records
// the collector rejected, why an export failed as a [Cause], and a [Cause.Hint]
// a user can act on. Every text that comes from the collector passes through
// [Sanitize] before it reaches an error.
package transport
