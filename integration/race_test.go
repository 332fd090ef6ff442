//go:build race

package integration

// raceEnabled: the race detector slows the exporter several times over,
// which changes what timing scenarios measure.
const raceEnabled = true
