package circuitbreak_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
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

// TestRejectionNamesTheBreaker: the error of a rejected call names the
// breaker's key and says whether it is open or half-open with its probe
// out, keeping code Overloaded, ErrOpen and NotSent.
func TestRejectionNamesTheBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 1, OpenFor: time.Second, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ep := g.Middleware(nil)(func(ctx context.Context, req, resp any) error {
		return rpcerr.New(rpcerr.Connection, "down")
	})
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Method: "getStock"})
	ep(ctx, nil, nil) // opens getStock's breaker
	check := func(err error, state string) {
		t.Helper()
		if !strings.Contains(fmt.Sprint(err), `"getStock"`) || !strings.Contains(fmt.Sprint(err), state) {
			t.Errorf("rejection %q does not name breaker \"getStock\" and say %s", err, state)
		}
		var ns interface{ RequestNotSent() bool }
		if rpcerr.CodeOf(err) != rpcerr.Overloaded || !errors.Is(err, circuitbreak.ErrOpen) || !errors.As(err, &ns) {
			t.Errorf("rejection %v: code %v, want overloaded, wrapping ErrOpen, not sent", err, rpcerr.CodeOf(err))
		}
	}
	check(ep(ctx, nil, nil), "open")
	now = now.Add(2 * time.Second)
	b := g.Get("getStock")
	probe, err := b.Admit() // the probe
	if err != nil || !probe.Probe() {
		t.Fatalf("after OpenFor: %v, probe %v", err, probe.Probe())
	}
	check(ep(ctx, nil, nil), "half-open")
	b.Finish(probe, nil)
}
