//go:build race

package main

// raceEnabled: the race detector is on, and sync.Pool drops a share of what
// is put back, so pooled buffers are allocated again.
const raceEnabled = true
