package thrift

import "strings"

// commonInitialisms are the words golint writes in capitals.
var commonInitialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true,
	"TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "UUID": true,
	"URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true,
	"XSRF": true, "XSS": true,
}

// reservedMethodNames are the methods the generator puts on every struct,
// union and exception type (plus Error on exceptions); a field may not map to
// one of them. Fields also get Get<Name> and IsSet<Name> accessors.
var reservedMethodNames = map[string]bool{
	"Read": true, "Write": true, "FastRead": true, "FastReadCompact": true,
	"FastReadDepth": true, "FastReadDepthCompact": true, "FastReadWhole": true,
	"FastReadWholeCompact": true, "FastWrite": true,
	"FastWriteCompact": true, "FastWriteNocopy": true, "BLength": true,
	"BLengthCompact": true, "Size": true, "String": true, "Validate": true,
	"Equals": true, "DeepCopy": true, "Reset": true, "Error": true,
	"CountSetFields": true, "IsSet": true, "GetError": true,
}

// IsReservedMethodName reports whether name (a Go name) is a method the
// generator defines on struct types: Read, Write, FastRead, FastReadCompact,
// FastReadDepth, FastReadDepthCompact, FastReadWhole, FastReadWholeCompact,
// FastWrite, FastWriteCompact, FastWriteNocopy, BLength, BLengthCompact,
// Size, String, Validate, Equals, DeepCopy, Reset, Error, CountSetFields,
// IsSet, GetError (result structs of service functions have it). A field
// whose Go name is one of these gets "_" appended ([GoFieldName]).
func IsReservedMethodName(name string) bool { return reservedMethodNames[name] }

// GoName turns a Thrift identifier into an exported Go identifier in golint
// style. Words are split at underscores, dots and case changes
// ("user_id", "userId", "UserID" all give "UserID"); each word gets a capital
// first letter, and common initialisms (ID, URL, HTTP, JSON, API, UUID, IP,
// RPC, ...) are written in capitals. A name without lower-case letters
// (SCREAMING_SNAKE_CASE, as constants and enum values are often written) has
// its other words in title case ("MAX_ITEMS" gives "MaxItems", "USER_ID"
// gives "UserID"); otherwise capitals are kept as written. Leading underscores, which would make
// the name unexported, become a leading "X" ("_type" gives "XType");
// trailing underscores are kept ("type_" gives "Type_"). An empty or
// all-underscore name gives "X".
func GoName(name string) string {
	lead := 0
	for lead < len(name) && name[lead] == '_' {
		lead++
	}
	trail := len(name)
	for trail > lead && name[trail-1] == '_' {
		trail--
	}
	var b strings.Builder
	b.Grow(len(name) + 2)
	if lead > 0 || len(name) == 0 {
		b.WriteByte('X')
	}
	screaming := !hasLower(name)
	for _, w := range splitWords(name[lead:trail]) {
		up := strings.ToUpper(w)
		if commonInitialisms[up] {
			b.WriteString(up)
			continue
		}
		b.WriteString(up[:1])
		if screaming {
			b.WriteString(strings.ToLower(w[1:]))
		} else {
			b.WriteString(w[1:])
		}
	}
	if lead == len(name) {
		// "_", "__": keep all but one underscore after the X so that
		// distinct names stay distinct.
		if lead > 1 {
			b.WriteString(name[1:])
		}
		return b.String()
	}
	b.WriteString(name[trail:])
	return b.String()
}

// GoFieldName returns the Go name of a struct field or argument: [GoName],
// with "_" appended when the result is a method the generator defines on
// struct types (see [IsReservedMethodName]): a field named read is Read_,
// and a throws field named error (as IDLs written for other generators
// have) is Error_. The generator appends more "_" where that name meets
// another field's.
func GoFieldName(name string) string {
	g := GoName(name)
	if reservedMethodNames[g] {
		g += "_"
	}
	return g
}

// splitWords splits an identifier at '_' and '.', before a capital that
// follows a lower-case letter or a digit ("userName" -> user, Name; "utf8Str"
// -> utf8, Str), and before the last capital of a run of capitals followed by
// a lower-case letter ("HTTPServer" -> HTTP, Server). Digits stay with the
// word before them.
func splitWords(s string) []string {
	var words []string
	start := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '.' {
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := s[i-1]
		if isUpper(c) {
			if isLower(prev) || isDigit(prev) {
				words = append(words, s[start:i])
				start = i
			} else if isUpper(prev) && i+1 < len(s) && isLower(s[i+1]) {
				words = append(words, s[start:i])
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLower(s[i]) {
			return true
		}
	}
	return false
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
