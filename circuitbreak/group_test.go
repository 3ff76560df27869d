package circuitbreak_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestGroupKeys: Get makes one breaker per key, Range lists them, Remove
// forgets one (its next Get is a new, closed breaker), and a group under
// churn holds only the keys not removed.
func TestGroupKeys(t *testing.T) {
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.Get("a"), g.Get("b")
	if g.Get("a") != a || g.Lookup("b") != b || g.Lookup("c") != nil {
		t.Fatal("Get/Lookup do not return the key's breaker")
	}
	probe, _ := a.Allow()
	a.Done(probe, rpcerr.New(rpcerr.Connection, "down"))
	if a.State() != circuitbreak.Open {
		t.Fatalf("a is %v after a failure with MinSamples 1", a.State())
	}
	var keys []string
	g.Range(func(k string, br *circuitbreak.Breaker) bool {
		keys = append(keys, k+"="+br.State().String())
		return true
	})
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a=open", "b=closed"}) {
		t.Fatalf("Range: %v", keys)
	}
	n := 0
	g.Range(func(string, *circuitbreak.Breaker) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Range went on after fn returned false: %d calls", n)
	}
	g.Remove("a")
	g.Remove("nothing")
	if g.Lookup("a") != nil || g.Len() != 1 {
		t.Fatalf("after Remove: Lookup %v, Len %d", g.Lookup("a"), g.Len())
	}
	if na := g.Get("a"); na == a || na.State() != circuitbreak.Closed {
		t.Fatal("Get after Remove did not make a new closed breaker")
	}
	// Churn: 1000 keys come and go; two stay.
	for i := range 1000 {
		k := fmt.Sprintf("10.0.0.%d:80", i)
		g.Get(k)
		g.Remove(k)
	}
	if g.Len() != 2 {
		t.Fatalf("after churn the group holds %d breakers, want 2", g.Len())
	}
}

// TestStateChangeHook: Config.OnStateChange hears every transition of a
// group's breakers with their key, and can read the breaker's state.
func TestStateChangeHook(t *testing.T) {
	clock := newClock()
	var got []string
	var g *circuitbreak.Group
	g, err := circuitbreak.NewGroup(circuitbreak.Config{
		MinSamples: 2, OpenFor: time.Second, HalfOpenSuccesses: 2, Now: clock.Now,
		OnStateChange: func(key string, from, to circuitbreak.State) {
			if now := g.Lookup(key).State(); now != to {
				t.Errorf("hook %s -> %s: the breaker reads %s", from, to, now)
			}
			got = append(got, key+":"+from.String()+">"+to.String())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := g.Get("10.0.0.1:80")
	call := func(fail bool) {
		t.Helper()
		probe, err := b.Allow()
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		var e error
		if fail {
			e = errConn
		}
		b.Done(probe, e)
	}
	call(true)
	call(true) // opens
	clock.Advance(time.Second)
	call(true) // half-open probe fails: open again
	clock.Advance(time.Second)
	call(false) // half-open, one success
	call(false) // closes
	want := []string{
		"10.0.0.1:80:closed>open", "10.0.0.1:80:open>half-open", "10.0.0.1:80:half-open>open",
		"10.0.0.1:80:open>half-open", "10.0.0.1:80:half-open>closed",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}
