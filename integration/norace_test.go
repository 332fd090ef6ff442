//go:build !race

package integration

const raceEnabled = false

const raceScale = 1
