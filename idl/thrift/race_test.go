//go:build race

package thrift_test

// raceEnabled: the tests run under the race detector (timing budgets widen).
const raceEnabled = true
