package stats_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/stats"
)

type key string

// recorder appends its name to a log on each hook and marks the context.
type recorder struct {
	name string
	log  *[]string
}

func (r recorder) Start(ctx context.Context) context.Context {
	*r.log = append(*r.log, "start "+r.name)
	return context.WithValue(ctx, key(r.name), true)
}

// Finish logs which of the marks "a" and "b" its context holds.
func (r recorder) Finish(ctx context.Context, st *stats.Stats) {
	seen := ""
	for _, k := range []key{"a", "b"} {
		if ctx.Value(k) != nil {
			seen += string(k)
		}
	}
	*r.log = append(*r.log, fmt.Sprintf("finish %s %s %v", r.name, seen, st.Error))
}

func TestChain(t *testing.T) {
	if stats.Chain() != nil || stats.Chain(nil, nil) != nil {
		t.Fatal("Chain of nothing is not nil")
	}
	var log []string
	a := recorder{"a", &log}
	if got := stats.Chain(nil, a); got != stats.Tracer(a) {
		t.Fatal("Chain of one tracer does not return it")
	}
	tr := stats.Chain(a, nil, recorder{"b", &log})
	ctx := tr.Start(context.Background())
	tr.Finish(ctx, &stats.Stats{Error: errors.New("x")})
	// Each Finish gets the context its own Start returned: b's holds both
	// marks, a's only its own.
	want := []string{"start a", "start b", "finish b ab x", "finish a a x"}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("log %q, want %q", log, want)
	}
}

func TestStats(t *testing.T) {
	t0 := time.Unix(100, 0)
	st := stats.Stats{Side: stats.Server, Begin: t0, End: t0.Add(3 * time.Millisecond)}
	if st.Latency() != 3*time.Millisecond {
		t.Fatalf("Latency %v", st.Latency())
	}
	st.Reset()
	if st != (stats.Stats{}) {
		t.Fatal("Reset left fields set")
	}
	if stats.Client.String() != "client" || stats.Server.String() != "server" || stats.Side(7).String() != "side_7" {
		t.Fatal("Side.String")
	}
}

// keeps returns nil from Start, which the client and server take as the
// context it was given.
type keeps struct{}

func (keeps) Start(ctx context.Context) context.Context   { return nil }
func (keeps) Finish(ctx context.Context, st *stats.Stats) {}

// TestChainStartNil: a tracer whose Start returns nil (taken by the client
// and server as the context unchanged) does not hand the next tracer of a
// Chain a nil context.
func TestChainStartNil(t *testing.T) {
	var log []string
	tr := stats.Chain(keeps{}, recorder{"a", &log}, keeps{})
	ctx := tr.Start(context.WithValue(context.Background(), key("b"), true))
	if ctx == nil {
		t.Fatal("Chain.Start returned nil")
	}
	if ctx.Value(key("a")) == nil || ctx.Value(key("b")) == nil {
		t.Fatal("the chain's context lost a value set before or by a tracer")
	}
	tr.Finish(ctx, &stats.Stats{})
	if want := []string{"start a", "finish a ab <nil>"}; fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("log %q, want %q", log, want)
	}
}

// gauge counts the calls in flight, as a metrics tracer does: Start adds
// one, Finish takes it back.
type gauge struct{ n *int }

func (g gauge) Start(ctx context.Context) context.Context   { *g.n++; return ctx }
func (g gauge) Finish(ctx context.Context, st *stats.Stats) { *g.n-- }

// buggy panics in Start or in Finish, as a tracer with a bug would.
type buggy struct{ inStart bool }

func (b buggy) Start(ctx context.Context) context.Context {
	if b.inStart {
		panic("tracer bug in Start")
	}
	return ctx
}

func (b buggy) Finish(ctx context.Context, st *stats.Stats) {
	if !b.inStart {
		panic("tracer bug in Finish")
	}
}

// panics runs f and returns what it panicked with.
func panics(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestChainPanicKeepsGauges: when a tracer of a Chain panics in Start or in
// Finish, each other tracer still gets one Finish for each Start it had, so
// that an in-flight gauge comes back to 0; the panic goes on to the caller.
// After a panic in Start the client calls no Finish, and the server calls
// Finish with the context it gave Start: the gauge ends at 0 with either.
func TestChainPanicKeepsGauges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chain  func(g gauge) stats.Tracer
		finish bool // Finish after a panicking Start, as the server does
	}{
		{"start, before, client", func(g gauge) stats.Tracer { return stats.Chain(g, buggy{true}, g) }, false},
		{"start, before, server", func(g gauge) stats.Tracer { return stats.Chain(g, buggy{true}, g) }, true},
		{"start, first, server", func(g gauge) stats.Tracer { return stats.Chain(buggy{true}, g) }, true},
	} {
		n := 0
		tr := tc.chain(gauge{&n})
		ctx := context.Background()
		if r := panics(func() { tr.Start(ctx) }); r != "tracer bug in Start" {
			t.Fatalf("%s: Start panicked with %v, want the tracer's panic", tc.name, r)
		}
		if tc.finish {
			tr.Finish(ctx, &stats.Stats{Error: errors.New("panic in Start")})
		}
		if n != 0 {
			t.Errorf("%s: in-flight gauge %d after a panic in Start, want 0", tc.name, n)
		}
	}
	n := 0
	g := gauge{&n}
	tr := stats.Chain(g, buggy{false}, g)
	ctx := tr.Start(context.Background())
	if r := panics(func() { tr.Finish(ctx, &stats.Stats{}) }); r != "tracer bug in Finish" {
		t.Fatalf("Finish panicked with %v, want the tracer's panic", r)
	}
	if n != 0 {
		t.Errorf("in-flight gauge %d after a panic in Finish, want 0", n)
	}
}

// spanKey is one key for every spanner, as OpenTelemetry has one key for
// the current span whatever tracer put it there.
type spanKey struct{}

// spanner puts its own span under spanKey in Start and checks in Finish
// that it gets back the context its Start returned, as a span-ending tracer
// needs to end its own span.
type spanner struct {
	name string
	got  *[]string
}

func (s spanner) Start(ctx context.Context) context.Context {
	return context.WithValue(ctx, spanKey{}, s.name)
}

func (s spanner) Finish(ctx context.Context, st *stats.Stats) {
	*s.got = append(*s.got, fmt.Sprintf("%s ends %v", s.name, ctx.Value(spanKey{})))
}

// TestChainFinishOwnContext: each tracer of a Chain gets in Finish the
// context its own Start returned, not the last tracer's, also when the
// chain finishes after a panic in Start and when chains are nested.
func TestChainFinishOwnContext(t *testing.T) {
	var got []string
	a, b, c := spanner{"a", &got}, spanner{"b", &got}, spanner{"c", &got}
	tr := stats.Chain(a, b, c)
	ctx := tr.Start(context.Background())
	if v := ctx.Value(spanKey{}); v != "c" {
		t.Fatalf("the chain's context has span %v, want c (the last tracer's)", v)
	}
	tr.Finish(ctx, &stats.Stats{})
	if want := []string{"c ends c", "b ends b", "a ends a"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Finish saw %q, want %q", got, want)
	}

	got = nil
	tr = stats.Chain(a, b, buggy{true})
	if r := panics(func() { tr.Start(context.Background()) }); r != "tracer bug in Start" {
		t.Fatalf("Start panicked with %v, want the tracer's panic", r)
	}
	if want := []string{"b ends b", "a ends a"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a panic in Start, Finish saw %q, want %q", got, want)
	}

	got = nil
	tr = stats.Chain(stats.Chain(a, b), c, stats.Chain(spanner{"d", &got}, spanner{"e", &got}))
	tr.Finish(tr.Start(context.Background()), &stats.Stats{})
	if want := []string{"e ends e", "d ends d", "c ends c", "b ends b", "a ends a"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("nested chains: Finish saw %q, want %q", got, want)
	}
}

// TestChainAllocs: a chain's Start and Finish allocate one context for up
// to four tracers, and a slice more for more.
func TestChainAllocs(t *testing.T) {
	n := 0
	g := gauge{&n}
	ctx := context.Background()
	st := &stats.Stats{}
	for _, tc := range []struct {
		tr   stats.Tracer
		want float64
	}{
		{stats.Chain(g, g), 1},
		{stats.Chain(g, g, g, g), 1},
		{stats.Chain(g, g, g, g, g), 2},
	} {
		allocs := testing.AllocsPerRun(100, func() { tc.tr.Finish(tc.tr.Start(ctx), st) })
		if allocs != tc.want {
			t.Errorf("%T: %v allocations a call, want %v", tc.tr, allocs, tc.want)
		}
	}
}
