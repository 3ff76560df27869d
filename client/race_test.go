//go:build race

package client_test

// raceEnabled: the tests run under the race detector (timing bounds loosen).
const raceEnabled = true
