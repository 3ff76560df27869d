package interop_test

import (
	"reflect"
	"testing"

	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
)

// TestComparisonSeesEveryField makes sure the checks above can fail: for
// every field of Everything, a value that differs only in that field (zeroed, or set where fullValue has
// the zero value) must
// differ from fullValue both as itself (diff looks at the field) and after
// toApache (the conversion carries the field).
func TestComparisonSeesEveryField(t *testing.T) {
	full := fullValue()
	fullA := toApache(full)
	typ := reflect.TypeFor[pe.Everything]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		changed := fullValue()
		fv := reflect.ValueOf(changed).Elem().Field(i)
		switch {
		case !fv.IsZero():
			fv.SetZero()
		case fv.Kind() == reflect.Bool:
			fv.SetBool(true)
		case fv.Kind() == reflect.Float64:
			fv.SetFloat(1)
		default:
			t.Fatalf("fullValue leaves %s unset", f.Name)
		}
		if d := diff(changed, full); d == "" {
			t.Errorf("diff misses a change of %s", f.Name)
		}
		if d := diff(toApache(changed), fullA); d == "" {
			t.Errorf("toApache does not carry %s", f.Name)
		}
	}
}
