package zapfield

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Semantic-convention keys of an exception.
const (
	KeyExceptionMessage = "exception.message"
	KeyExceptionType    = "exception.type"
)

// errorKey is the key of zap.Error's field, the one that maps to exception.*.
const errorKey = "error"

// ErrorRead is what an error field becomes, both ways: for the key
// "error" an exception (Msg and Type), else Msg under Key; either way
// zap's "<key>Causes" and "<key>Verbose", its details.
type ErrorRead struct {
	Key, Msg, Type string
	Exception      bool
	// What "<field>Causes" and "<field>Verbose" are made of, appended by
	// AppendDetails to the caller's pooled slice: no slice of its own.
	field   string
	causes  []error
	verbose string
}

// AppendException appends the exception's attributes: its message, its
// type, its details.
func (r *ErrorRead) AppendException(kvs []attribute.KeyValue) []attribute.KeyValue {
	kvs = append(kvs, StringAttr(KeyExceptionMessage, r.Msg), StringAttr(KeyExceptionType, r.Type))
	return r.AppendDetails(kvs)
}

// AppendDetails appends the error's "<field>Causes" and "<field>Verbose".
func (r *ErrorRead) AppendDetails(kvs []attribute.KeyValue) []attribute.KeyValue {
	return appendErrorDetails(kvs, r.field, r.causes, r.verbose)
}

// ReadError reads err for the field key, running its user code (Error,
// Errors, Format, ErrorType) once, each panic caught as a field's
// conversion catches one: a panicking Error is "<key>Error"; a panicking
// ErrorType leaves the exception as it was and the field says so, or
// "<nil>" for a nil pointer.
func ReadError(key string, err error) (r ErrorRead) {
	msg, causes, verbose, perr := describeError(err)
	if perr != nil {
		return ErrorRead{Key: key + "Error", Msg: perr.Error()}
	}
	if key != errorKey {
		return ErrorRead{Key: key, Msg: msg, field: key, causes: causes, verbose: verbose}
	}
	defer func() {
		if p := recover(); p != nil {
			k, s := PanicRead(key, err, p)
			r = ErrorRead{Key: k, Msg: s}
		}
	}()
	return ErrorRead{Msg: msg, Type: errorType(err), Exception: true, field: key, causes: causes, verbose: verbose}
}

func appendErrorDetails(kvs []attribute.KeyValue, key string, causes []error, verbose string) []attribute.KeyValue {
	if len(causes) > 0 {
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(otlpwire.ValidString(key + "Causes")), Value: causesValue(causes)})
	}
	if verbose != "" {
		kvs = append(kvs, StringAttr(key+"Verbose", verbose))
	}
	return kvs
}

// causesValue is a multi-error's causes as zap prints them: a slice of
// objects, each {"error": message}, with its own causes and verbose form.
func causesValue(causes []error) attribute.Value {
	vals := make([]attribute.Value, 0, len(causes))
	for _, err := range causes {
		if err == nil {
			continue
		}
		msg, inner, verbose, perr := describeError(err)
		var kvs []attribute.KeyValue
		if perr != nil {
			kvs = append(kvs, StringAttr(errorKey+"Error", perr.Error()))
		} else {
			kvs = append(kvs, StringAttr(errorKey, msg))
			kvs = appendErrorDetails(kvs, errorKey, inner, verbose)
		}
		vals = append(vals, attribute.MapValue(kvs...))
	}
	return attribute.SliceValue(vals...)
}

// describeError reads err as zap's encoder does, guarding against a panic
// in Error or Format: a nil pointer reads "<nil>", any other panic is
// returned. Causes are those of a multi-error with an Errors method
// (go.uber.org/multierr), as zap reads them; errors.Join's are already in
// its message, and zap prints none.
func describeError(err error) (msg string, causes []error, verbose string, perr error) {
	defer func() {
		if r := recover(); r != nil {
			if isNilPointer(err) {
				msg, causes, verbose, perr = "<nil>", nil, "", nil
				return
			}
			perr = errors.New("PANIC=" + PanicText(r))
		}
	}()
	msg = err.Error()
	switch e := err.(type) {
	case interface{ Errors() []error }:
		causes = e.Errors()
	case fmt.Formatter:
		if v := fmt.Sprintf("%+v", e); v != msg {
			verbose = v
		}
	}
	return msg, causes, verbose, nil
}

// stringerText is what zap's Field.AddTo makes of a Stringer field: the
// key and String(); "<nil>" for a nil pointer whose String panics; for any
// other panic, "PANIC=<value>" under "<key>Error".
func stringerText(key string, v any) (k, s string) {
	defer func() {
		if r := recover(); r != nil {
			k, s = PanicRead(key, v, r)
		}
	}()
	return key, v.(fmt.Stringer).String()
}

// PanicRead is what zap makes of r, a panic in the user code of v, the
// value of the field key: "<nil>" under key for a nil pointer, whose
// method zap reads so; else "PANIC=<r>" under "<key>Error".
func PanicRead(key string, v, r any) (k, s string) {
	if isNilPointer(v) {
		return key, "<nil>"
	}
	return key + "Error", "PANIC=" + PanicText(r)
}

// errorType names err's type fully, as semantic conventions ask of
// exception.type: "*errors.errorString", "*github.com/x/y.MyError", or the
// ErrorType() string of an error that has one, as the OTel SDK reads it.
func errorType(err error) string {
	if et, ok := err.(interface{ ErrorType() string }); ok {
		if s := et.ErrorType(); s != "" {
			return s
		}
	}
	t := reflect.TypeOf(err)
	if name, ok := errorTypeNames.Load(t); ok {
		return name.(string)
	}
	name := typeName(t)
	errorTypeNames.Store(t, name)
	return name
}

// errorTypeNames caches typeName: a program has few error types and logs
// them often.
var errorTypeNames sync.Map // reflect.Type -> string

func typeName(t reflect.Type) string {
	stars := ""
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t, stars = t.Elem(), stars+"*"
	}
	if t.PkgPath() != "" && t.Name() != "" {
		return stars + t.PkgPath() + "." + t.Name()
	}
	return stars + t.String()
}

// isNilPointer reports whether v is a nil pointer, whose methods zap reads
// as "<nil>" when they panic.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// PanicText is fmt.Sprint of a recovered panic value. The value is user
// code too: one whose String or Error panics in turn makes fmt panic
// again, out of the recover that was to contain the first panic, and a
// logging call would crash the program. Such a value is named by its type.
func PanicText(r any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T (its String or Error panicked)", r)
		}
	}()
	return fmt.Sprint(r)
}

// StringAttr is a string attribute, its key and value made valid UTF-8.
func StringAttr(k, v string) attribute.KeyValue {
	return attribute.KeyValue{Key: attribute.Key(otlpwire.ValidString(k)), Value: attribute.StringValue(otlpwire.ValidString(v))}
}
