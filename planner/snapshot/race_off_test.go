//go:build !race

package snapshot

// raceDetector says the tests run under -race (race_on_test.go).
const raceDetector = false
