//go:build race

package integration

// raceEnabled: the race detector slows the exporter several times over,
// which changes what timing scenarios measure.
const raceEnabled = true

// raceScale divides the size of the load scenarios under the race
// detector, which makes every logging call and export several times
// slower: the same shapes, in a fraction of the lines.
const raceScale = 5
