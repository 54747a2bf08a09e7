//go:build race

package snapshot

// raceDetector says the tests run under -race, where sync.Pool drops what
// is put in it at random: allocation counts are not the code's there.
const raceDetector = true
