enum Color { RED, GREEN }

struct S {
  1: Color c = Color.PURPLE
}
