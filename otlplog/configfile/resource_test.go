package configfile

import (
	"testing"

	"github.com/zaplens/zaplens/internal/declarative"
)

// The file's arrays become arrays of the type the attribute names, strings
// when it names none; an element of another type, or a type that is not
// an array's, fails with the type.
func TestFileAttributeArrays(t *testing.T) {
	typed := func(name string, typ string, vs ...any) declarative.Attribute {
		return declarative.Attribute{Name: name, Value: vs, Type: typ}
	}
	for _, tc := range []struct {
		a    declarative.Attribute
		want string // the attribute's type and value, or the error
	}{
		{typed("b", "bool_array", true, false), "BOOLSLICE [true,false]"},
		{typed("i", "int_array", 1, 2), "INT64SLICE [1,2]"},
		{typed("d", "double_array", 1.5), "FLOAT64SLICE [1.5]"},
		{typed("s", "string_array", "x", "y"), `STRINGSLICE ["x","y"]`},
		{typed("e", "int_array"), "INT64SLICE []"},
		{declarative.Attribute{Name: "u", Value: []any{"x"}}, `STRINGSLICE ["x"]`},
		{typed("m", "int_array", 1, "x"), "an element is not of type int_array"},
		{typed("m", "string_array", "x", 1), "an element is not of type string_array"},
		{typed("n", "bool", true), "an array of type bool"},
	} {
		kv, err := fileAttribute(tc.a)
		got := kv.Value.Type().String() + " " + kv.Value.String()
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || err == nil && string(kv.Key) != tc.a.Name {
			t.Errorf("%s %v: got %s %s, want %s", tc.a.Name, tc.a.Value, kv.Key, got, tc.want)
		}
	}
}
