// Payloads for the Thrift codec benchmarks. small and large follow the two
// cases of CloudWeGo's Kitex codec article: a ~20 KB typical RPC response
// (a page of records, a few scalars, one small map, an id list, a small
// binary) and a ~6 MB message built from large containers (ID lists of i64
// and i32, a list of doubles, a list of short strings, a map<i64, i64>, a
// list of small structs, a 1 MB binary). maps is a ~20 KB message dominated
// by 42 small maps (230 entries), kept to show what map iteration costs.
// The builders in payload_test.go fill them; bench/README.md gives the
// exact composition.
namespace go payload

// Record is one row of a typical response.
struct Record {
  1: i64 id
  2: string name
  3: string status
  4: double score
  5: i32 rank
  6: bool active
  7: list<i64> related
}

// Small: a typical RPC response, about 20 KB on the wire.
struct Small {
  1: i64 request_id
  2: i32 code
  3: string message
  4: bool has_more
  5: i64 timestamp
  6: list<Record> records
  7: map<string, string> extra
  8: list<i64> ids
  9: binary blob
}

// Large: about 6 MB on the wire, made of large containers.
struct Large {
  1: i64 request_id
  2: list<i64> ids
  3: list<i32> counts
  4: list<double> scores
  5: list<string> names
  6: map<i64, i64> index
  7: list<Record> records
  8: binary blob
}

enum Kind {
  UNKNOWN = 0
  BOOK = 1
  MUSIC = 2
  VIDEO = 3
}

struct Price {
  1: i64 cents
  2: string currency
}

struct Item {
  1: i64 id
  2: string title
  3: Kind kind
  4: Price price
  5: double score
  6: bool available
  7: list<string> tags
  8: map<string, string> attrs
  9: optional string note
}

// Maps: about 20 KB on the wire, dominated by small map<string, string>
// (40 items with 4 attrs each, 20 headers, 50 counters).
struct Maps {
  1: i64 request_id
  2: string caller
  3: map<string, string> headers
  4: list<i64> ids
  5: list<Item> items
  6: map<string, i64> counters
  7: binary blob
  8: optional string trace
  9: i32 page
  10: list<double> weights
}
