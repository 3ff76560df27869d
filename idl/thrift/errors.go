package thrift

import (
	"sort"
	"strings"
)

// Error is one problem found in an IDL file: a syntax error, a file that
// cannot be read, or a failed check.
type Error struct {
	Pos Pos
	Msg string
	Err error // the cause, if any (for example an *fs.PathError)
}

// Error returns "file:line:col: message" ("file: message" when Pos has no
// line).
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorList is every problem found, sorted by position. [ParseFile] and
// [Parse] return one (as an error) when anything is wrong.
type ErrorList []*Error

// Error returns the errors one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// sortErrors orders by position and drops exact duplicates.
func sortErrors(l ErrorList) ErrorList {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Pos.Before(l[j].Pos) })
	out := l[:0]
	for i, e := range l {
		if i > 0 && e.Pos == l[i-1].Pos && e.Msg == l[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}
