struct P { 1: i32 x; 2: i32 y }
const P C = {"x": 1, "y": 2, "x": 3}
