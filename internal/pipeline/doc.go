// Package pipeline moves encoded log records from the logging call to the
// collector: a queue bounded by bytes, requests cut by scope under a byte
// bound, one export goroutine, and a count of every record's outcome.
package pipeline
