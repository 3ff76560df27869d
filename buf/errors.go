package buf

import (
	"errors"
	"fmt"
)

// ErrNotEnough reports a read of more bytes than the buffer holds. Errors
// returned by the Reader methods wrap it with the sizes involved.
var ErrNotEnough = errors.New("buf: not enough data")

// ErrNegativeSize reports a negative length argument.
var ErrNegativeSize = errors.New("buf: negative size")

// ErrDelimNotFound reports an Until call whose delimiter is not in the buffer.
var ErrDelimNotFound = errors.New("buf: delimiter not found")

func notEnough(op string, want int, have int64) error {
	return fmt.Errorf("%w: %s needs %d bytes, %d readable", ErrNotEnough, op, want, have)
}

func negative(op string, n int) error {
	return fmt.Errorf("%w: %s(%d)", ErrNegativeSize, op, n)
}
