package zapfield

import (
	"cmp"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
)

// A struct's fields as encoding/json writes them, and the methods json
// calls on a type, found once a type: the walk of a reflected value
// (reflect.go) writes what json would, field for field.

// jsonField is one field json writes: its name, where it lies (through
// embedded structs), and its tag's options.
type jsonField struct {
	name                       string
	index                      []int
	tagged                     bool
	omitEmpty, omitZero, quote bool
}

var jsonFieldCache sync.Map // reflect.Type -> []jsonField

func jsonFieldsOf(t reflect.Type) []jsonField {
	if f, ok := jsonFieldCache.Load(t); ok {
		return f.([]jsonField)
	}
	f := structFields(t)
	jsonFieldCache.Store(t, f)
	return f
}

// structFields follows json's rules: exported fields and the fields of
// embedded structs, a tag's name or the field's, and of fields sharing a
// name the shallowest, a tagged one first; any other tie hides them all.
func structFields(t reflect.Type) []jsonField {
	var fields []jsonField
	type embedded struct {
		t     reflect.Type
		index []int
	}
	next := []embedded{{t: t}}
	visited := map[reflect.Type]bool{}
	var count, nextCount map[reflect.Type]int
	for len(next) > 0 {
		current := next
		next, count, nextCount = nil, nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.t] {
				continue
			}
			visited[e.t] = true
			for i := range e.t.NumField() {
				sf := e.t.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && !(sf.Anonymous && ft.Kind() == reflect.Struct) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					if nextCount[ft]++; nextCount[ft] == 1 {
						next = append(next, embedded{t: ft, index: index})
					}
					continue
				}
				f := jsonField{name: name, index: index, tagged: name != "",
					omitEmpty: hasOption(opts, "omitempty"), omitZero: hasOption(opts, "omitzero"),
					quote: hasOption(opts, "string") && quotable(ft.Kind())}
				if f.name == "" {
					f.name = sf.Name
				}
				fields = append(fields, f)
				if count[e.t] > 1 {
					fields = append(fields, f) // a tie, for the loop below to see
				}
			}
		}
	}
	// sort.Slice, not slices.SortFunc: a struct type of our own would
	// instantiate slices' sort again, 13 KB of code (benchmarks/binsize).
	sort.Slice(fields, func(i, j int) bool { return compareFields(fields[i], fields[j]) < 0 })
	out := fields[:0]
	for i := 0; i < len(fields); {
		n := 1
		for i+n < len(fields) && fields[i+n].name == fields[i].name {
			n++
		}
		same := fields[i : i+n]
		if n == 1 || len(same[0].index) != len(same[1].index) || same[0].tagged != same[1].tagged {
			out = append(out, same[0])
		}
		i += n
	}
	return out
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// validTagName is json's test of a tag's name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// omitted tells whether json leaves the field out: omitempty's empty
// values, omitzero's zero ones (by the type's IsZero, if it has one).
func (f *jsonField) omitted(v reflect.Value) bool {
	return (f.omitEmpty && isEmptyValue(v)) || (f.omitZero && isZeroValue(v))
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

func isZeroValue(v reflect.Value) bool {
	if (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) && v.IsNil() {
		return true
	}
	if v.Kind() == reflect.Interface && v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() {
		return true
	}
	if v.CanInterface() {
		if z, ok := v.Interface().(isZeroer); ok {
			return z.IsZero()
		}
		if v.CanAddr() {
			if z, ok := v.Addr().Interface().(isZeroer); ok {
				return z.IsZero()
			}
		}
	}
	return v.IsZero()
}

// methods are the methods of a type the walk calls in place of reading
// its kind, as json calls them: MarshalJSON, MarshalText, on the value or,
// when it is addressable, its pointer; and Error, which json does not.
type methods uint8

const (
	hasJSON methods = 1 << iota
	addrJSON
	hasText
	addrText
	isError
	isAttrValue // an attribute.Value, kept as itself
	isTime      // a time.Time, as timeValue writes it
)

var (
	attributeValueType = reflect.TypeFor[attribute.Value]()
	jsonNumberType     = reflect.TypeFor[json.Number]()
	timeType           = reflect.TypeFor[time.Time]()
	jsonMarshalerType  = reflect.TypeFor[json.Marshaler]()
	textMarshalerType  = reflect.TypeFor[encoding.TextMarshaler]()
	errorIfaceType     = reflect.TypeFor[error]()
)

var methodCache sync.Map // reflect.Type -> methods

// methodsOf are t's methods the walk calls. A predeclared type, and a
// type without a name that is no struct or pointer, has none, and needs
// no look-up.
func methodsOf(t reflect.Type) methods {
	if t.Name() == "" {
		if k := t.Kind(); k != reflect.Struct && k != reflect.Pointer {
			return 0
		}
	} else if t.PkgPath() == "" {
		return 0
	}
	if m, ok := methodCache.Load(t); ok {
		return m.(methods)
	}
	var m methods
	switch t {
	case attributeValueType:
		m |= isAttrValue
	case timeType:
		m |= isTime
	}
	ptr := t.Kind() != reflect.Pointer
	switch {
	case t.Implements(jsonMarshalerType):
		m |= hasJSON
	case ptr && reflect.PointerTo(t).Implements(jsonMarshalerType):
		m |= addrJSON
	}
	switch {
	case t.Implements(textMarshalerType):
		m |= hasText
	case ptr && reflect.PointerTo(t).Implements(textMarshalerType):
		m |= addrText
	}
	if t.Implements(errorIfaceType) {
		m |= isError
	}
	methodCache.Store(t, m)
	return m
}

// compareFields orders fields as json does: by name, then depth, then a
// tagged field before an untagged one, then index.
func compareFields(a, b jsonField) int {
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
		return c
	}
	if a.tagged != b.tagged {
		if a.tagged {
			return -1
		}
		return 1
	}
	return slices.Compare(a.index, b.index)
}
