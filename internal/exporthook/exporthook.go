// Package exporthook lets the module's tests outside package otlplog
// send a provider's requests where they want, as otlplog's own tests do
// with a private option: the bridge's tests and benchmarks measure and
// check the bridge on zaplens's provider without a network. Package
// otlplog sets WithExport when it is initialized; only tests call it.
package exporthook

import "context"

// Export is what a provider's transport does with one request, as
// internal/pipeline's ExportFunc: body, of n records, sent; final marks
// the exports of a flush or a shutdown. It returns how many records the
// receiver rejected (n when the export failed), and why.
type Export = func(ctx context.Context, body []byte, n int, final bool) (rejected int, err error)

// WithExport returns an otlplog.Option (as any: this package cannot name
// it) that makes a provider hand its requests to export instead of a
// transport.
var WithExport func(export Export) any
