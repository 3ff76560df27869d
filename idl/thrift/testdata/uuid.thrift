// The uuid base type (Apache Thrift 0.19+).
namespace go petrel.test.uuid

typedef uuid RequestID

const uuid NIL = "00000000-0000-0000-0000-000000000000"
const uuid BRACED = "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}"

struct Tracked {
  1: uuid id
  2: optional RequestID request_id
  3: list<uuid> related
  4: map<uuid, string> labels
  5: uuid fixed = "6ba7b811-9dad-11d1-80b4-00c04fd430c8"
}

service Lookup {
  Tracked find(1: uuid id)
}
