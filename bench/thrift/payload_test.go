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

func (f filler) record(id int64) *pp.Record {
	statuses := []string{"active", "pending", "suspended", "archived"}
	r := &pp.Record{
		ID:      id,
		Name:    f.text(32),
		Status:  statuses[f.r.IntN(len(statuses))],
		Score:   f.r.Float64() * 100,
		Rank:    f.r.Int32N(10_000),
		Active:  f.r.IntN(2) == 1,
		Related: make([]int64, 5),
	}
	for i := range r.Related {
		r.Related[i] = f.r.Int64()
	}
	return r
}

func (f filler) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(f.r.Uint32())
	}
	return b
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

// smallPayload is a typical RPC response, about 19 KB on the wire: a page
// of 100 records, a few scalars, a 10-entry map<string, string>, 400 ids and
// a 2 KiB binary.
func smallPayload() *pp.Small {
	f := newFiller(20)
	v := &pp.Small{
		RequestID: 1 << 40,
		Code:      0,
		Message:   "ok",
		HasMore:   true,
		Timestamp: 1_700_000_000_000,
		Records:   make([]*pp.Record, 100),
		Extra:     make(map[string]string, 10),
		Ids:       make([]int64, 400),
		Blob:      f.bytes(2048),
	}
	for i := range v.Records {
		v.Records[i] = f.record(int64(i))
	}
	for i := range 10 {
		v.Extra[fmt.Sprintf("x-key-%02d", i)] = f.text(20)
	}
	for i := range v.Ids {
		v.Ids[i] = f.r.Int64()
	}
	return v
}

// largePayload is about 6 MB on the wire, built from large containers:
// 300,000 i64 ids, 200,000 i32 counts, 50,000 doubles, 30,000 16-byte
// strings, a 20,000-entry map<i64, i64>, 3,000 records and a 1 MiB binary.
func largePayload() *pp.Large {
	f := newFiller(6)
	v := &pp.Large{
		RequestID: 2 << 40,
		Ids:       make([]int64, 300_000),
		Counts:    make([]int32, 200_000),
		Scores:    make([]float64, 50_000),
		Names:     make([]string, 30_000),
		Index:     make(map[int64]int64, 20_000),
		Records:   make([]*pp.Record, 3_000),
		Blob:      f.bytes(1 << 20),
	}
	for i := range v.Ids {
		v.Ids[i] = f.r.Int64()
	}
	for i := range v.Counts {
		v.Counts[i] = f.r.Int32()
	}
	for i := range v.Scores {
		v.Scores[i] = f.r.NormFloat64()
	}
	for i := range v.Names {
		v.Names[i] = f.text(16)
	}
	for i := range 20_000 {
		v.Index[int64(i)*7919] = f.r.Int64()
	}
	for i := range v.Records {
		v.Records[i] = f.record(int64(i))
	}
	return v
}

// mapsPayload is about 19 KB on the wire and dominated by small maps: 40
// items with a 4-entry map<string, string> each, 20 headers, 50 counters
// (42 maps, 230 entries), plus 200 ids, 100 doubles and a 2 KiB binary.
func mapsPayload() *pp.Maps {
	f := newFiller(20)
	v := &pp.Maps{
		RequestID: 1 << 40,
		Caller:    "petrel.bench.client",
		Headers:   make(map[string]string, 20),
		Ids:       make([]int64, 200),
		Items:     make([]*pp.Item, 40),
		Counters:  make(map[string]int64, 50),
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
	v.Blob = f.bytes(2048)
	for i := range v.Weights {
		v.Weights[i] = f.r.NormFloat64()
	}
	return v
}
