// Self-referencing and mutually recursive types.
namespace go petrel.test.recursive

struct Tree {
  1: string value
  2: list<Tree> children
  3: optional Tree left
  4: optional Tree right
}

struct Ping {
  1: optional Pong pong
}

struct Pong {
  1: optional Ping ping
  2: map<string, Ping> pings
}

union Expr {
  1: i64 literal
  2: BinaryOp op
}

struct BinaryOp {
  1: string operator
  2: Expr lhs
  3: Expr rhs
}

typedef list<Tree> Forest
