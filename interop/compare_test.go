package interop_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// diff reports the first difference between a and b (values of the same
// type), as a path and the two values, or "" when they are equal.
//
// Nil and empty slices and maps are equal, because the wire cannot tell them
// apart, except in fields tagged `json:",omitempty"`: both generators tag
// optional fields (and union members) that way, and there nil means "not
// set" and empty means "set, with no elements", which the wire does carry.
func diff(a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return fmt.Sprintf("types differ: %s and %s", va.Type(), vb.Type())
	}
	return diffValue(va.Type().String(), va, vb, false)
}

func diffValue(path string, a, b reflect.Value, optional bool) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v, other %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return diffValue(path, a.Elem(), b.Elem(), false)
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			opt := strings.Contains(f.Tag.Get("json"), ",omitempty")
			if d := diffValue(path+"."+f.Name, a.Field(i), b.Field(i), opt); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if optional && a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: optional field nil %v, other %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d, other %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffValue(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i), false); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if optional && a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: optional field nil %v, other %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries, other %d", path, a.Len(), b.Len())
		}
		iter := a.MapRange()
		for iter.Next() {
			k := iter.Key()
			vb := b.MapIndex(k)
			if !vb.IsValid() {
				return fmt.Sprintf("%s: key %v missing in the other", path, k)
			}
			if d := diffValue(fmt.Sprintf("%s[%v]", path, k), iter.Value(), vb, false); d != "" {
				return d
			}
		}
		return ""
	case reflect.Float32, reflect.Float64:
		// Both readers take the same eight bytes, so they must agree bit for
		// bit; a NaN (which the fuzzer makes) is not equal to itself.
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v (%#x), other %v (%#x)", path, a, math.Float64bits(a.Float()), b, math.Float64bits(b.Float()))
		}
		return ""
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v, other %v", path, a, b)
		}
		return ""
	}
}
