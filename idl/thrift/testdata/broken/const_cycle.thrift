const i32 X = Y
const i32 Y = X
