//go:build !peersuite

package otelzap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// knownDifferences are the official suite's cases zaplens fails, each
// with its reason (docs/migrating.md tells them to users).
var knownDifferences = map[string]string{
	// Representation: zaplens writes a value the way that keeps it exact
	// and readable, as zap's own encoders print it.
	"TestObjectEncoder/AddComplex128":          "complex as its text, (1+2i), as zap prints it; the official bridge a map {r, i}",
	"TestObjectEncoder/AddComplex64":           "complex as its text",
	"TestArrayEncoder/AppendComplex128":        "complex as its text",
	"TestArrayEncoder/AppendComplex64":         "complex as its text",
	"TestConvertValue/complex128":              "complex as its text",
	"TestConvertValue/complex64":               "complex as its text",
	"TestObjectEncoder/AddFloat32":             "float32 as its shortest decimal (0.1 stays 0.1), not widened to 0.10000000149011612",
	"TestArrayEncoder/AppendFloat32":           "float32 as its shortest decimal",
	"TestObjectEncoder/AddTime":                "time as RFC 3339 text with nanoseconds and zone, not Unix nanoseconds",
	"TestArrayEncoder/AppendTime":              "time as RFC 3339 text",
	"TestConvertValue/time.Time":               "time as RFC 3339 text",
	"TestObjectEncoder/AddUint64-Overflow":     "a uint64 above MaxInt64 as its exact digits, not a rounded float",
	"TestArrayEncoder/AppendUint64_-_overflow": "a uint64 above MaxInt64 as its exact digits",
	"TestConvertValue/[]byte":                  "a reflected []byte as encoding/json writes it, base64 text; zap.Binary gives bytes",
	"TestConvertValue/struct":                  "a reflected struct as encoding/json writes it, a map of its fields (tags honoured), not its %+v text",
	"TestConvertValue/struct_ptr":              "a reflected struct as a map of its fields",
	"TestConvertValue/unhandled_type":          "a channel as its type's name, chan int, without the official bridge's \"unhandled: \" prefix and address",
	"TestConvertValue/ctx":                     "a context given to zap.Reflect or zap.Any is the entry's context, as the official bridge reads zap.Any's, not an attribute",
	"TestConvertLevel":                         "a level above Fatal is Fatal4 (below Debug, Trace), not Undefined: a custom level keeps its rank",
	// zap.Error: zaplens writes exception.message and exception.type
	// itself, besides SetErr, so that they arrive whatever the exporter.
	"TestCore/WriteError": "zap.Error also adds exception.message and exception.type",
	"TestCoreErrorFieldSetErrBehavior/ErrorFieldUsesSetErr": "zap.Error also adds exception.message and exception.type",
	"TestCoreWithErrorStacktraceDefault":                    "zap.Error also adds exception.message and exception.type",
	"TestCoreWithExceptionStacktrace":                       "zap.Error also adds exception.message and exception.type",
	// Depth and cycles: 32 levels kept as structure, the rest as JSON text
	// (the SDK empties a value past 64 levels); a cycle is cut where it
	// closes, the rest kept, and told in <key>Error.
	"TestConvertValueDepthLimit/100_nested_slices_ending_in_scalar_succeed":        "32 levels as structure, the rest as JSON text",
	"TestConvertValueDepthLimit/101_nested_slices_exceed_limit":                    "32 levels as structure, the rest as JSON text, not <max-depth-exceeded>",
	"TestConvertValueDepthLimit/101_pointers_exceed_limit":                         "pointers are not levels (json writes none): the value kept",
	"TestConvertValueDepthLimit/container_beyond_limit_fails_through_interface":    "32 levels as structure, the rest as JSON text",
	"TestConvertValueDepthLimit/empty_map_is_allowed_at_boundary":                  "32 levels as structure, the rest as JSON text",
	"TestConvertValueDepthLimit/empty_slice_is_allowed_at_boundary":                "32 levels as structure, the rest as JSON text",
	"TestConvertValueDepthLimit/interface_indirection_does_not_count_toward_limit": "32 levels as structure, the rest as JSON text",
	"TestConvertValueFailsFast":                                                    "a cycle cut where it closes, the rest kept, not the whole value replaced by <max-depth-exceeded>",
	"TestConvertValueRecursiveValues/branching_slice_cycle":                        "a cycle cut where it closes, the rest kept",
	"TestConvertValueRecursiveValues/direct_map_cycle":                             "a cycle cut where it closes, the rest kept",
	"TestConvertValueRecursiveValues/direct_slice_cycle":                           "a cycle cut where it closes, the rest kept",
	"TestConvertValueRecursiveValues/mixed_map-slice_cycle":                        "a cycle cut where it closes, the rest kept",
	"TestConvertValueRecursiveValues/mutual_pointer-interface_cycle":               "a cycle cut where it closes, the rest kept",
	"TestConvertValueRecursiveValues/pointer-interface_cycle":                      "a cycle cut where it closes, the rest kept",
	// A field made by hand that zap's own encoder panics on is told, not
	// dropped, as every such field is.
	"TestCoreMalformedErrorFieldDoesNotPanic/InvalidErrorType": "an ErrorType field made by hand with no error in it is told as <key>Error (zap's panic text), not dropped",
	// Construction.
	"TestNewCoreConfiguration/Default": "zaplens asks the provider for a scope's logger at the scope's first entry, not in NewCore",
	"TestNewCoreConfiguration/Options": "zaplens asks for loggers at the first entry, and has no scope version, schema URL or scope attributes",
	"TestCoreWithCaller":               "the port's artifact: code.function.name is the test's own function, in this package, not in otelzap's",
}

// TestPeerSuite runs the official bridge's suite against zaplens (the
// files with the build tag peersuite) and holds its outcome to
// knownDifferences: a case that fails and is not listed, or is listed
// and passes, fails this test.
func TestPeerSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the suite in a child go test")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, _ := exec.Command(goTool, "test", "-tags", "peersuite", "-count=1", "-json", ".").Output()
	outcome := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Action, Test string }
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Test != "" && (e.Action == "pass" || e.Action == "fail") {
			outcome[e.Test] = e.Action
		}
	}
	var cases, passed []string
	for name := range outcome {
		if !hasSubtests(outcome, name) {
			cases = append(cases, name)
		}
	}
	slices.Sort(cases)
	for _, name := range cases {
		reason, known := knownDifferences[name]
		switch {
		case outcome[name] == "pass" && known:
			t.Errorf("%s passes now; take it off the known differences (%s)", name, reason)
		case outcome[name] == "pass":
			passed = append(passed, name)
		case !known:
			t.Errorf("%s fails, and is no known difference", name)
		}
	}
	for name := range knownDifferences {
		if _, ran := outcome[name]; !ran {
			t.Errorf("known difference %s did not run", name)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("the suite did not run:\n%s", out)
	}
	t.Logf("official suite: %d cases, %d pass, %d known differences", len(cases), len(passed), len(cases)-len(passed))
}

func hasSubtests(outcome map[string]string, name string) bool {
	for other := range outcome {
		if strings.HasPrefix(other, name+"/") {
			return true
		}
	}
	return false
}
