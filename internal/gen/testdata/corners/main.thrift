// Corner cases of the generator, each of which once gave Go that did not
// compile (TestCorpus builds and vets the output).
namespace go petrel.gen.corners

// Included packages whose Go names are locals of the generated readers
// (FastReadDepth's block of optional values is opt, of type optionals).
include "opt.thrift"
include "optionals.thrift"

struct UsesOpt {
  1: optional i32 a
  2: optional i64 b
  3: list<opt.Inner> items
  4: opt.Color color
  5: optional optionals.Mode mode
  6: optionals.Other other
}
