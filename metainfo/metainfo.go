// Package metainfo carries string key-values from a caller to the services it
// calls, through context.Context, beside the IDL-defined arguments.
//
// There are two kinds, with the semantics CloudWeGo Kitex gives them (so that
// Petrel and Kitex services pass them to each other over TTHeader):
//
//   - transient values ([WithValue]) travel one hop: from a client to the
//     server it calls. On the server they are "upstream" values: the handler
//     reads them with [GetValue], but a call the handler makes with the same
//     context does not forward them.
//   - persistent values ([WithPersistentValue]) travel every hop: a server
//     that receives one forwards it on every call it makes with the handler's
//     context.
//
// Keys and values are case-sensitive strings; an empty key or value is
// ignored. Contexts are immutable: a With or Del call returns a new context
// and leaves its parent unchanged. A nil context carries no values; the
// With functions and [FromWire] take it as context.Background().
//
// # Wire form
//
// In TTHeader the values go in the string key-value block (INFO_KEYVALUE) with
// the key prefixed by [PrefixTransient] ("RPC_TRANSIT_") or [PrefixPersistent]
// ("RPC_PERSIST_"), the prefixes of github.com/bytedance/gopkg/cloud/metainfo
// that Kitex writes. [ToWire] and [FromWire] convert; the HTTP prefixes
// ([HTTPPrefixTransient], [HTTPPrefixPersistent]) are what Kitex uses in HTTP
// headers and gRPC metadata.
package metainfo

import (
	"context"
	"strings"
)

// Wire prefixes of the key-values in TTHeader's string block.
const (
	PrefixTransient  = "RPC_TRANSIT_"
	PrefixPersistent = "RPC_PERSIST_"
	// PrefixTransientUpstream marks upstream transient values in Kitex's
	// in-process maps. Clients do not send upstream values; on the wire it is
	// PrefixTransient before a key that starts with "UPSTREAM_", and FromWire
	// reads it so.
	PrefixTransientUpstream = "RPC_TRANSIT_UPSTREAM_"
)

// Prefixes Kitex uses for HTTP headers and gRPC metadata.
const (
	HTTPPrefixTransient  = "rpc-transit-"
	HTTPPrefixPersistent = "rpc-persist-"
)

type kv struct{ k, v string }

// node is the immutable set of values a context carries.
type node struct {
	transient  []kv // set by this service: sent on the next hop
	upstream   []kv // received from the caller: readable, not forwarded
	persistent []kv // sent on every hop
}

type ctxKey struct{}

// getNode returns the values ctx carries; a nil ctx carries none.
func getNode(ctx context.Context) *node {
	if ctx == nil {
		return nil
	}
	n, _ := ctx.Value(ctxKey{}).(*node)
	return n
}

func find(list []kv, k string) (string, bool) {
	for i := range list {
		if list[i].k == k {
			return list[i].v, true
		}
	}
	return "", false
}

// set returns a copy of list with k set to v.
func set(list []kv, k, v string) []kv {
	out := make([]kv, 0, len(list)+1)
	for _, e := range list {
		if e.k != k {
			out = append(out, e)
		}
	}
	return append(out, kv{k, v})
}

// del returns list without k (list itself when k is absent).
func del(list []kv, k string) []kv {
	if _, ok := find(list, k); !ok {
		return list
	}
	out := make([]kv, 0, len(list)-1)
	for _, e := range list {
		if e.k != k {
			out = append(out, e)
		}
	}
	return out
}

// with returns a child of ctx carrying its values changed by f; a nil ctx
// is taken as context.Background(), so that the values are kept.
func with(ctx context.Context, f func(n *node)) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	var n node
	if old := getNode(ctx); old != nil {
		n = *old
	}
	f(&n)
	return context.WithValue(ctx, ctxKey{}, &n)
}

// WithValue returns a context carrying the transient value k=v, sent to the
// next service called with it (one hop). It returns ctx when k or v is empty.
func WithValue(ctx context.Context, k, v string) context.Context {
	if k == "" || v == "" {
		return ctx
	}
	return with(ctx, func(n *node) { n.transient = set(n.transient, k, v) })
}

// GetValue returns the transient value k: one set in this service with
// [WithValue], else one received from the caller.
func GetValue(ctx context.Context, k string) (string, bool) {
	n := getNode(ctx)
	if n == nil {
		return "", false
	}
	if v, ok := find(n.transient, k); ok {
		return v, true
	}
	return find(n.upstream, k)
}

// DelValue returns a context without the transient value k (set here or
// received).
func DelValue(ctx context.Context, k string) context.Context {
	n := getNode(ctx)
	if n == nil {
		return ctx
	}
	if _, ok := find(n.transient, k); !ok {
		if _, ok := find(n.upstream, k); !ok {
			return ctx
		}
	}
	return with(ctx, func(n *node) {
		n.transient = del(n.transient, k)
		n.upstream = del(n.upstream, k)
	})
}

// GetAllValues returns every transient value (received ones, overridden by
// those set here), or nil when there is none.
func GetAllValues(ctx context.Context) map[string]string {
	n := getNode(ctx)
	if n == nil || len(n.transient)+len(n.upstream) == 0 {
		return nil
	}
	m := make(map[string]string, len(n.transient)+len(n.upstream))
	for _, e := range n.upstream {
		m[e.k] = e.v
	}
	for _, e := range n.transient {
		m[e.k] = e.v
	}
	return m
}

// WithPersistentValue returns a context carrying the persistent value k=v,
// forwarded on every hop. It returns ctx when k or v is empty.
func WithPersistentValue(ctx context.Context, k, v string) context.Context {
	if k == "" || v == "" {
		return ctx
	}
	return with(ctx, func(n *node) { n.persistent = set(n.persistent, k, v) })
}

// GetPersistentValue returns the persistent value k.
func GetPersistentValue(ctx context.Context, k string) (string, bool) {
	n := getNode(ctx)
	if n == nil {
		return "", false
	}
	return find(n.persistent, k)
}

// DelPersistentValue returns a context without the persistent value k.
func DelPersistentValue(ctx context.Context, k string) context.Context {
	n := getNode(ctx)
	if n == nil {
		return ctx
	}
	if _, ok := find(n.persistent, k); !ok {
		return ctx
	}
	return with(ctx, func(n *node) { n.persistent = del(n.persistent, k) })
}

// GetAllPersistentValues returns every persistent value, or nil when there
// is none.
func GetAllPersistentValues(ctx context.Context) map[string]string {
	n := getNode(ctx)
	if n == nil || len(n.persistent) == 0 {
		return nil
	}
	m := make(map[string]string, len(n.persistent))
	for _, e := range n.persistent {
		m[e.k] = e.v
	}
	return m
}

// HasValues reports whether ctx carries anything [ToWire] would send: a
// transient value set in this service or a persistent value.
func HasValues(ctx context.Context) bool {
	n := getNode(ctx)
	return n != nil && len(n.transient)+len(n.persistent) > 0
}

// ToWire adds to m the values a call made with ctx sends: transient values
// set in this service under [PrefixTransient]+key, persistent values under
// [PrefixPersistent]+key. Upstream transient values are not sent. A nil m
// has no room for them: ToWire then does nothing.
func ToWire(ctx context.Context, m map[string]string) {
	n := getNode(ctx)
	if n == nil || m == nil {
		return
	}
	for _, e := range n.transient {
		m[PrefixTransient+e.k] = e.v
	}
	for _, e := range n.persistent {
		m[PrefixPersistent+e.k] = e.v
	}
}

// FromWire returns a context carrying the values a server received in m (a
// TTHeader string block): keys with [PrefixTransient] become upstream
// transient values (readable with [GetValue], not forwarded), keys with
// [PrefixPersistent] persistent values (forwarded). Other keys, empty names
// and empty values are ignored; ctx itself is returned when nothing is
// found.
func FromWire(ctx context.Context, m map[string]string) context.Context {
	var up, pers []kv
	for k, v := range m {
		if v == "" {
			continue
		}
		// RPC_TRANSIT_UPSTREAM_x is the transient value UPSTREAM_x: that is
		// what a Petrel or Kitex client sends for it (neither writes
		// upstream values). Like every received transient value it is not
		// forwarded.
		switch {
		case strings.HasPrefix(k, PrefixTransient) && len(k) > len(PrefixTransient):
			up = append(up, kv{k[len(PrefixTransient):], v})
		case strings.HasPrefix(k, PrefixPersistent) && len(k) > len(PrefixPersistent):
			pers = append(pers, kv{k[len(PrefixPersistent):], v})
		}
	}
	if len(up)+len(pers) == 0 {
		return ctx
	}
	return with(ctx, func(n *node) {
		n.upstream = merge(n.upstream, up)
		n.persistent = merge(n.persistent, pers)
	})
}

// merge returns list with the values of add set, add's keys being distinct
// (the suffixes of distinct keys with one prefix). It copies list once, not
// once per key as set would: a header may hold thousands of keys.
func merge(list, add []kv) []kv {
	if len(add) == 0 {
		return list
	}
	if len(list) == 0 {
		return add
	}
	keys := make(map[string]struct{}, len(add))
	for _, e := range add {
		keys[e.k] = struct{}{}
	}
	out := make([]kv, 0, len(list)+len(add))
	for _, e := range list {
		if _, ok := keys[e.k]; !ok {
			out = append(out, e)
		}
	}
	return append(out, add...)
}
