// Types that Petrel supports and the Apache Thrift compiler 0.17.0 does not:
// uuid (added in Apache Thrift 0.19; compiler 0.17.0 says `Type "uuid" not
// defined`, and Go library 0.17.0 has no uuid methods). Tests check these
// against the wire formats' specifications instead of against Apache code.
namespace go petrelonly

struct Identified {
  1: uuid id
  2: optional uuid parent
  3: list<uuid> related
  4: map<uuid, string> labels
  5: uuid fixed = "6ba7b811-9dad-11d1-80b4-00c04fd430c8"
}
