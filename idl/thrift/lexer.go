package thrift

import (
	"bytes"
	"strconv"
	"strings"
)

// tokKind is the class of a lexical token.
type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokInt
	tokDouble
	tokString
	tokPunct // one of { } [ ] < > ( ) , ; : = * &
)

// token is one lexical token.
type token struct {
	kind tokKind
	pos  Pos
	text string  // identifier, punctuation, or the number as written
	str  string  // decoded string literal
	ival int64   // tokInt
	fval float64 // tokDouble
	doc  string  // doc comment directly before the token
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokIdent:
		return strconv.Quote(t.text)
	case tokInt:
		return "integer " + t.text
	case tokDouble:
		return "number " + t.text
	case tokString:
		return "string literal"
	}
	return strconv.Quote(t.text)
}

// lexer turns source bytes into tokens. It stops at the first error.
type lexer struct {
	file string
	src  []byte
	off  int
	line int
	col  int // column of src[off], from 1
	err  *Error
}

func newLexer(file string, src []byte) *lexer {
	l := &lexer{file: file, src: src, line: 1, col: 1}
	// A UTF-8 byte order mark, which some editors put at the start of a
	// file, is skipped as the Go compiler skips it; columns do not count it.
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		l.off = 3
	}
	return l
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.col} }

func (l *lexer) fail(p Pos, msg string) token {
	if l.err == nil {
		l.err = &Error{Pos: p, Msg: msg}
	}
	return token{kind: tokEOF, pos: p}
}

// advance moves over n bytes, none of which is a newline.
func (l *lexer) advance(n int) {
	l.off += n
	l.col += n
}

// skip consumes whitespace and comments and returns the doc comment that
// directly precedes the next token.
func (l *lexer) skip() string {
	var doc strings.Builder // grown line by line: joining by copying would be quadratic
	docLine := 0            // line after the last /// doc line, to join consecutive ones
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\n':
			l.off++
			l.line++
			l.col = 1
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
		case c == '#' || (c == '/' && l.peekByte(1) == '/'):
			start := l.off
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.off++
			}
			text := string(l.src[start:l.off])
			l.col += l.off - start
			if strings.HasPrefix(text, "///") && !strings.HasPrefix(text, "////") {
				line := strings.TrimPrefix(text[3:], " ")
				line = strings.TrimRight(line, " \t\r")
				if docLine != l.line || doc.Len() == 0 {
					doc.Reset()
				} else {
					doc.WriteByte('\n')
				}
				doc.WriteString(line)
				docLine = l.line + 1
			}
		case c == '/' && l.peekByte(1) == '*':
			p := l.pos()
			end := indexOf(l.src[l.off+2:], "*/")
			if end < 0 {
				l.fail(p, "comment not terminated: missing */")
				l.off = len(l.src)
				return ""
			}
			body := l.src[l.off : l.off+2+end+2]
			isDoc := len(body) > 4 && body[2] == '*' && body[3] != '/'
			for _, b := range body {
				if b == '\n' {
					l.line++
					l.col = 1
				} else {
					l.col++
				}
			}
			l.off += len(body)
			if isDoc {
				doc.Reset()
				doc.WriteString(cleanDoc(string(body[3 : len(body)-2])))
				docLine = 0
			}
		default:
			return doc.String()
		}
	}
	return doc.String()
}

// posAt returns the position of src[i], i >= l.off.
func (l *lexer) posAt(i int) Pos {
	p := l.pos()
	for _, c := range l.src[l.off:i] {
		if c == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

func (l *lexer) peekByte(n int) byte {
	if l.off+n < len(l.src) {
		return l.src[l.off+n]
	}
	return 0
}

func indexOf(b []byte, s string) int {
	return bytes.Index(b, []byte(s))
}

// cleanDoc strips the decoration of a /** */ comment body: a leading '*' and
// one space on each line, and blank lines at both ends.
func cleanDoc(body string) string {
	lines := strings.Split(body, "\n")
	for i, ln := range lines {
		ln = strings.TrimRight(ln, " \t\r")
		t := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(t, "*") {
			t = strings.TrimPrefix(t[1:], " ")
		} else if i == 0 {
			t = strings.TrimPrefix(ln, " ")
		}
		lines[i] = t
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func isIdentStart(c byte) bool { return c == '_' || isUpper(c) || isLower(c) }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// next returns the next token; after an error it returns tokEOF.
func (l *lexer) next() token {
	if l.err != nil {
		return token{kind: tokEOF, pos: l.pos()}
	}
	doc := l.skip()
	if l.err != nil {
		return token{kind: tokEOF, pos: l.pos()}
	}
	p := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: p, doc: doc}
	}
	c := l.src[l.off]
	var t token
	switch {
	case isIdentStart(c):
		t = l.ident()
	case isDigit(c) || c == '+' || c == '-' || (c == '.' && isDigit(l.peekByte(1))):
		t = l.number()
	case c == '"' || c == '\'':
		t = l.literal()
	case strings.IndexByte("{}[]<>(),;:=*&", c) >= 0:
		l.advance(1)
		t = token{kind: tokPunct, text: string(c)}
	default:
		if c >= 0x80 || c < 0x20 {
			return l.fail(p, "unexpected byte "+hexByte(c))
		}
		return l.fail(p, "unexpected character "+strconv.QuoteRune(rune(c)))
	}
	t.pos = p
	t.doc = doc
	return t
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return "0x" + string([]byte{digits[c>>4], digits[c&15]})
}

// ident lexes [a-zA-Z_](\.[a-zA-Z_0-9]|[a-zA-Z_0-9])*.
func (l *lexer) ident() token {
	start := l.off
	i := l.off + 1
	for i < len(l.src) {
		c := l.src[i]
		if isIdentChar(c) {
			i++
		} else if c == '.' && i+1 < len(l.src) && isIdentChar(l.src[i+1]) {
			i += 2
		} else {
			break
		}
	}
	l.advance(i - start)
	return token{kind: tokIdent, text: string(l.src[start:i])}
}

// number lexes [+-]?(0x[0-9a-fA-F]+ | [0-9]+ | [0-9]*(\.[0-9]+)?([eE][+-]?[0-9]+)?).
func (l *lexer) number() token {
	p := l.pos()
	s := l.src
	i := l.off
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		j := i + 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j == i+2 {
			return l.fail(p, "hexadecimal constant has no digits")
		}
		if j < len(s) && isIdentChar(s[j]) {
			return l.fail(p, "malformed hexadecimal constant "+strconv.Quote(string(s[l.off:j+1])))
		}
		text := string(s[l.off:j])
		neg := s[l.off] == '-'
		u, err := strconv.ParseUint(string(s[i+2:j]), 16, 64)
		if err != nil || (!neg && u > 1<<63-1) || (neg && u > 1<<63) {
			return l.fail(p, "integer constant "+text+" does not fit in 64 bits")
		}
		v := int64(u)
		if neg {
			v = -v
		}
		l.advance(j - l.off)
		return token{kind: tokInt, text: text, ival: v}
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	float := false
	if j < len(s) && s[j] == '.' {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j+1 {
			return l.fail(p, "malformed number "+strconv.Quote(string(s[l.off:k]))+": a digit must follow '.'")
		}
		j = k
		float = true
	}
	if j == i {
		return l.fail(p, "unexpected character "+strconv.QuoteRune(rune(s[l.off])))
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		d := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == d {
			return l.fail(p, "malformed number "+strconv.Quote(string(s[l.off:k]))+": exponent has no digits")
		}
		j = k
		float = true
	}
	if j < len(s) && isIdentChar(s[j]) {
		return l.fail(p, "malformed number "+strconv.Quote(string(s[l.off:j+1])))
	}
	text := string(s[l.off:j])
	l.advance(j - l.off)
	if float {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return l.fail(p, "number "+text+" is out of range for a double")
		}
		return token{kind: tokDouble, text: text, fval: f}
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return l.fail(p, "integer constant "+text+" does not fit in 64 bits")
	}
	return token{kind: tokInt, text: text, ival: v}
}

// literal lexes a string in double or single quotes. Escapes: \\ \" \' \n
// \r \t. A literal may span lines, as in Apache Thrift.
func (l *lexer) literal() token {
	p := l.pos()
	q := l.src[l.off]
	var b strings.Builder
	i := l.off + 1
	for {
		if i >= len(l.src) {
			return l.fail(p, "string literal not terminated")
		}
		c := l.src[i]
		if c == q {
			i++
			break
		}
		if c == '\\' {
			if i+1 >= len(l.src) {
				return l.fail(p, "string literal not terminated")
			}
			switch e := l.src[i+1]; e {
			case '\\', '"', '\'':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				return l.fail(l.posAt(i), "unknown escape sequence \\"+string(rune(e))+" in string literal")
			}
			i += 2
			continue
		}
		b.WriteByte(c)
		i++
	}
	text := string(l.src[l.off:i])
	for _, c := range l.src[l.off:i] {
		if c == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
	}
	l.off = i
	return token{kind: tokString, text: text, str: b.String()}
}
