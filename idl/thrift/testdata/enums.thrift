// Enums with explicit, implicit and mixed numbering.
namespace go petrel.test.enums

enum Implicit {
  ZERO,
  ONE,
  TWO
}

enum Explicit {
  TEN = 10;
  TWENTY = 20;
  HEX = 0x30;
}

enum Mixed {
  A = 5
  B
  C = 1
  D
  NEG = -3
  NEXT
}

enum Empty {}
