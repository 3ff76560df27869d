package interop_test

import (
	ae "github.com/petrel-rpc/petrel/interop/gen-apache/everything"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
)

// The conversions below build the Apache value that holds what a Petrel
// value holds, field by field. Tests compare values of the same generator's
// types only: an Apache value read from Petrel's bytes against toApache of
// the Petrel value written, and a Petrel value read from Apache's bytes
// against the Petrel value it was converted from (which also catches a field
// this conversion forgot).

func toApache(p *pe.Everything) *ae.Everything {
	if p == nil {
		return nil
	}
	a := &ae.Everything{
		Flag:         p.Flag,
		Octet:        p.Octet,
		Tiny:         p.Tiny,
		ShortInt:     p.ShortInt,
		Int32Value:   p.Int32Value,
		Int64Value:   p.Int64Value,
		Ratio:        p.Ratio,
		Text:         p.Text,
		Blob:         cloneBytes(p.Blob),
		Color:        ae.Color(p.Color),
		Stamp:        ae.Timestamp(p.Stamp),
		Inner:        innerToApache(p.Inner),
		Choice:       choiceToApache(p.Choice),
		Oops:         oopsToApache(p.Oops),
		Bools:        cloneSlice(p.Bools),
		Octets:       cloneSlice(p.Octets),
		Shorts:       cloneSlice(p.Shorts),
		Ints:         cloneSlice(p.Ints),
		Longs:        cloneSlice(p.Longs),
		Doubles:      cloneSlice(p.Doubles),
		IntSet:       cloneSlice(p.IntSet),
		LongToDouble: cloneMap(p.LongToDouble),
		Strings:      cloneSlice(p.Strings),
		StringSet:    cloneSlice(p.StringSet),
		StringMap:    cloneMap(p.StringMap),
		Blobs:        mapSlice(p.Blobs, cloneBytes),
		Names:        ae.Names(cloneSlice(p.Names)),
		Inners:       mapSlice(p.Inners, innerToApache),
		ColorSet:     mapSlice(p.ColorSet, colorToApache),
		Colors:       mapSlice(p.Colors, colorToApache),
		OptFlag:      clonePtr(p.OptFlag),
		OptInt:       clonePtr(p.OptInt),
		OptText:      clonePtr(p.OptText),
		OptBlob:      cloneBytes(p.OptBlob),
		OptInner:     innerToApache(p.OptInner),
		OptInts:      cloneSlice(p.OptInts),
		OptMap:       cloneMap(p.OptMap),
		OptRatio:     clonePtr(p.OptRatio),
		DefInt:       p.DefInt,
		DefText:      p.DefText,
		DefRatio:     p.DefRatio,
		DefColor:     ae.Color(p.DefColor),
		DefList:      cloneSlice(p.DefList),
		DefMap:       cloneMap(p.DefMap),
		DefFlag:      p.DefFlag,
		// Apache makes an optional field with a default a plain value and
		// writes it only when it differs from the default; Petrel makes it a
		// pointer. GetOptDef gives the default when the pointer is nil.
		OptDef:  p.GetOptDef(),
		ReqInt:  p.ReqInt,
		ReqText: p.ReqText,
	}
	if p.InnerByName != nil {
		a.InnerByName = make(map[string]*ae.Inner, len(p.InnerByName))
		for k, v := range p.InnerByName {
			a.InnerByName[k] = innerToApache(v)
		}
	}
	if p.ColorCount != nil {
		a.ColorCount = make(map[ae.Color]int32, len(p.ColorCount))
		for k, v := range p.ColorCount {
			a.ColorCount[ae.Color(k)] = v
		}
	}
	if p.Nested != nil {
		a.Nested = make(map[string][][]int32, len(p.Nested))
		for k, v := range p.Nested {
			a.Nested[k] = mapSlice(v, cloneSlice[int32])
		}
	}
	a.ListOfMaps = mapSlice(p.ListOfMaps, cloneMap[int32, string])
	a.Matrix = mapSlice(p.Matrix, cloneSlice[int64])
	if p.OptColor != nil {
		c := ae.Color(*p.OptColor)
		a.OptColor = &c
	}
	return a
}

func colorToApache(c pe.Color) ae.Color { return ae.Color(c) }

func innerToApache(p *pe.Inner) *ae.Inner {
	if p == nil {
		return nil
	}
	return &ae.Inner{ID: p.ID, Name: p.Name, Weight: clonePtr(p.Weight)}
}

func choiceToApache(p *pe.Choice) *ae.Choice {
	if p == nil {
		return nil
	}
	return &ae.Choice{
		Number: clonePtr(p.Number),
		Text:   clonePtr(p.Text),
		Inner:  innerToApache(p.Inner),
		Words:  cloneSlice(p.Words),
		Raw:    cloneBytes(p.Raw),
	}
}

func oopsToApache(p *pe.Oops) *ae.Oops {
	if p == nil {
		return nil
	}
	return &ae.Oops{Code: p.Code, Message: p.Message, Detail: innerToApache(p.Detail)}
}

// cloneSlice copies s, keeping nil nil and empty empty.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func cloneBytes(b []byte) []byte { return cloneSlice(b) }

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func mapSlice[T, U any](s []T, f func(T) U) []U {
	if s == nil {
		return nil
	}
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
