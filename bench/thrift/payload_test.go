package thriftbench_test

import (
	"fmt"
	"math/rand/v2"

	pp "github.com/petrel-rpc/petrel/bench/thrift/gen-petrel/payload"
)

// The payloads are built deterministically from a fixed seed, so every run
// measures the same bytes.

const words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"

type filler struct{ r *rand.Rand }

func newFiller(seed uint64) filler {
	return filler{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// text returns n bytes of word-like text.
func (f filler) text(n int) string {
	start := f.r.IntN(len(words) - n)
	return words[start : start+n]
}

func (f filler) price() *pp.Price {
	currencies := []string{"EUR", "USD", "JPY", "CNY"}
	return &pp.Price{Cents: f.r.Int64N(1_000_000), Currency: currencies[f.r.IntN(len(currencies))]}
}

func (f filler) item(id int64) *pp.Item {
	it := &pp.Item{
		ID:        id,
		Title:     f.text(40),
		Kind:      pp.Kind(f.r.IntN(4)),
		Price:     f.price(),
		Score:     f.r.Float64() * 5,
		Available: f.r.IntN(2) == 1,
		Tags:      make([]string, 4),
		Attrs:     make(map[string]string, 4),
	}
	for i := range it.Tags {
		it.Tags[i] = f.text(8)
	}
	for i := range 4 {
		it.Attrs[fmt.Sprintf("attr-%d", i)] = f.text(16)
	}
	if id%3 == 0 {
		note := f.text(24)
		it.Note = &note
	}
	return it
}

// smallPayload is about 20 KB on the wire.
func smallPayload() *pp.Small {
	f := newFiller(20)
	v := &pp.Small{
		RequestID: 1 << 40,
		Caller:    "petrel.bench.client",
		Headers:   make(map[string]string, 20),
		Ids:       make([]int64, 200),
		Items:     make([]*pp.Item, 40),
		Counters:  make(map[string]int64, 50),
		Blob:      make([]byte, 2048),
		Page:      7,
		Weights:   make([]float64, 100),
	}
	trace := f.text(32)
	v.Trace = &trace
	for i := range 20 {
		v.Headers[fmt.Sprintf("x-header-%02d", i)] = f.text(30)
	}
	for i := range v.Ids {
		v.Ids[i] = f.r.Int64()
	}
	for i := range v.Items {
		v.Items[i] = f.item(int64(i))
	}
	for i := range 50 {
		v.Counters[fmt.Sprintf("counter-%03d", i)] = f.r.Int64N(1 << 32)
	}
	for i := range v.Blob {
		v.Blob[i] = byte(f.r.Uint32())
	}
	for i := range v.Weights {
		v.Weights[i] = f.r.NormFloat64()
	}
	return v
}

// largePayload is about 6 MB on the wire.
func largePayload() *pp.Large {
	f := newFiller(6)
	v := &pp.Large{
		RequestID: 2 << 40,
		Ids:       make([]int64, 200_000),
		Names:     make([]string, 50_000),
		Labels:    make(map[int64]string, 20_000),
		Items:     make([]*pp.Item, 6_000),
		Prices:    make(map[string]*pp.Price, 10_000),
		Counts:    make([]int32, 100_000),
	}
	for i := range v.Ids {
		v.Ids[i] = f.r.Int64()
	}
	for i := range v.Names {
		v.Names[i] = f.text(20)
	}
	for i := range 20_000 {
		v.Labels[int64(i)*7919] = f.text(20)
	}
	for i := range v.Items {
		v.Items[i] = f.item(int64(i))
	}
	for i := range 10_000 {
		v.Prices[fmt.Sprintf("sku-%06d", i)] = f.price()
	}
	for i := range v.Counts {
		v.Counts[i] = f.r.Int32()
	}
	return v
}
