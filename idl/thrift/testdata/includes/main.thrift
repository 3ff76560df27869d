/**
 * Includes across directories: shared.thrift sits in a subdirectory of this
 * file, common.thrift is found through an include directory (-I incdir).
 */
include "sub/shared.thrift"
include "common.thrift"

namespace go petrel.test.includes
namespace * includes

typedef shared.Base BaseAlias

const common.Level DEFAULT_LEVEL = common.Level.WARN
const i32 LIMIT = common.MAX_ITEMS

struct Envelope {
  1: required shared.Base base
  2: optional common.Level level = common.Level.INFO
  3: list<shared.Base> history
  4: map<common.Level, BaseAlias> by_level
  5: i32 limit = LIMIT
}

service Relay extends shared.BaseService {
  Envelope forward(1: Envelope env) throws (1: shared.Failure failure)
}
