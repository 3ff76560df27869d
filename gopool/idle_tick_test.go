package gopool_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/gopool"
)

// TestTinyIdleTimeoutDoesNotSpin: the idle timer ticks every IdleTimeout
// while workers live, busy ones included. An IdleTimeout of a few
// nanoseconds (IdleTimeout: 10, meant as seconds) must not make it tick
// hundreds of thousands of times a second, taking the pool's lock each
// time: New refuses it, naming the field.
func TestTinyIdleTimeoutDoesNotSpin(t *testing.T) {
	for _, idle := range []time.Duration{1, 10 * time.Nanosecond, time.Microsecond, time.Millisecond - 1} {
		p, err := gopool.New(gopool.Config{IdleTimeout: idle})
		if err != nil {
			var ce *gopool.ConfigError
			if !errors.As(err, &ce) || ce.Field != "IdleTimeout" || !strings.Contains(err.Error(), "1ms") {
				t.Errorf("IdleTimeout %v: error %v, want a ConfigError of IdleTimeout saying the least accepted", idle, err)
			}
			continue
		}
		release := make(chan struct{})
		p.Go(func() { <-release })
		time.Sleep(100 * time.Millisecond) // the span measured, not synchronization
		ticks := p.Ticks()
		close(release)
		_ = p.Close()
		if ticks > 1000 {
			t.Errorf("IdleTimeout %v: the idle timer ran %d times in 100ms with one busy worker", idle, ticks)
		}
	}
	if _, err := gopool.New(gopool.Config{IdleTimeout: gopool.MinIdleTimeout}); err != nil {
		t.Errorf("IdleTimeout %v refused: %v", gopool.MinIdleTimeout, err)
	}
}
