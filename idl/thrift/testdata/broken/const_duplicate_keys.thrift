enum E { A = 1, B = 2 }
const string S = "a"
const map<string, i32> M = {"a": 1, "b": 2, "a": 3, S: 4}
const map<i64, string> N = {1: "x", 0x1: "y"}
const map<E, i32> P = {E.A: 1, 1: 2, E.B: 3}
const map<double, i32> D = {1: 1, 1.0: 2, 0.5: 3}
const map<bool, i32> Q = {true: 1, 1: 2}
const map<uuid, i32> U = {"00000000-0000-0000-0000-0000000000AB": 1, "{00000000-0000-0000-0000-0000000000ab}": 2}
