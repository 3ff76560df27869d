//go:build race

package netpoll_test

const raceEnabled = true
