// Payloads for the Thrift codec benchmarks, shaped like the two cases of
// CloudWeGo's Kitex codec article: a ~20 KB message of strings, maps, lists
// and nested structs, and a ~6 MB one built from large lists and maps of
// i64s, strings and structs. The builders in payload_test.go fill them.
namespace go payload

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

// Small: about 20 KB on the wire.
struct Small {
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

// Large: about 6 MB on the wire.
struct Large {
  1: i64 request_id
  2: list<i64> ids
  3: list<string> names
  4: map<i64, string> labels
  5: list<Item> items
  6: map<string, Price> prices
  7: list<i32> counts
}
