package confval

import (
	"math"
	"time"
)

// Compression tells whether name is a compression zaplens sends with, as
// a variable, an option or the file gives it.
func Compression(name string) bool { return name == "gzip" || name == "none" }

// MaxMillis is the most milliseconds a time.Duration holds; more is
// DurationOverflow.
const (
	MaxMillis        = math.MaxInt64 / int64(time.Millisecond)
	DurationOverflow = "more milliseconds than a duration holds"
)
