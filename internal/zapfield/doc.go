// Package zapfield converts zap fields, once, for both of the bridge's
// outputs: OTel attributes (the general way, any log.LoggerProvider) and
// OTLP protobuf bytes (the direct way, zaplens's own pipeline). It holds
// the whole conversion: the walk (walk.go), both ways' leaves (attrLeaves
// in encoder.go, wireLeaves in wire.go), the encoder that drives them
// ([Encoder], with what a logger's With became, [With]), reflected values
// (reflect.go) and errors (errors.go). The bridge, the root package, owns
// the entry's state around it (where a record goes, its bound, the hold,
// the redactor and the features that add attributes) and gives a leaf what
// it needs of that through [EntryState], the contract between the two.
//
// [Walk] is the one switch over zap's field types. It reads each field as
// zap's Field.AddTo reads it (integers cut to their width, a time in its
// location, a Stringer's or an error's user code run once and guarded)
// and hands the value to a [Leaves], whose methods write it to one output.
// As log/slog's handler state walks a record's attributes and its
// appenders write them, no output decides what a field means, and no
// field type is added to one output and forgotten in the other. A new
// field type is a case in Walk and, if it needs one, a method of Leaves,
// which both leaves must then write; a new feature's attributes go in
// EntryState.Added, which both ways write, and need nothing here.
//
// A field costs the walk one call, an interface call to its leaf: Walk
// loops over the fields itself. A way's Leaves is a struct of one pointer,
// so that passing it allocates nothing. (A type parameter instead, Walk
// stenciled per way, measured no cheaper: its calls go through the
// dictionary just as these go through the interface.)
package zapfield
