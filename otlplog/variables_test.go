package otlplog

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's table of the pipeline's variables from variables.go")

// docsFile holds the table of the pipeline's variables.
const docsFile = "../docs/configuration.md"

// The table of docs/configuration.md is the table of variables.go, made
// from it: a variable added to one and not the other, or told otherwise,
// fails here.
func TestVariablesDocumented(t *testing.T) {
	b, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	head := "| variable | meaning | default | option |\n|---|---|---|---|\n"
	before, after, ok := strings.Cut(string(b), head)
	if !ok {
		t.Fatalf("%s has no table headed %q", docsFile, head)
	}
	end := 0
	for end < len(after) && after[end] == '|' {
		end += strings.IndexByte(after[end:], '\n') + 1
	}
	got, want := after[:end], markdownTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(docsFile, []byte(before+head+want+after[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		g, w := "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s, row %d of the variables' table:\n%s\nvariables.go makes it\n%s\n(go test -run TestVariablesDocumented ./otlplog -update rewrites it)", docsFile, i+1, g, w)
		}
	}
}

// markdownTable is the rows of the table of variables in Markdown.
func markdownTable() string {
	var b strings.Builder
	for _, v := range variables {
		option := " "
		if v.option != "" {
			option = " `" + v.option + "` "
		}
		fmt.Fprintf(&b, "| %s | %s | %s |%s|\n", namesCell(v.names), v.doc, v.def, option)
	}
	return b.String()
}

// namesCell writes names in backquotes, a logs-specific variable and its
// general form as one: OTEL_EXPORTER_OTLP_[LOGS_]ENDPOINT.
func namesCell(names []string) string {
	var cells []string
	for i := 0; i < len(names); i++ {
		n := names[i]
		if i+1 < len(names) && strings.Replace(n, "_LOGS_", "_", 1) == names[i+1] {
			n, i = strings.Replace(n, "_LOGS_", "_[LOGS_]", 1), i+1
		}
		cells = append(cells, "`"+n+"`")
	}
	return strings.Join(cells, ", ")
}

// Every variable the pipeline reads is emptied by the tests' cleanEnv, so
// that the machine's environment cannot change a test's outcome.
func TestVariablesCleanedForTests(t *testing.T) {
	var names []string
	for _, v := range variables {
		names = append(names, v.names...)
	}
	for _, n := range names {
		t.Setenv(n, "set")
	}
	cleanEnv(t)
	for _, n := range names {
		if os.Getenv(n) != "" {
			t.Errorf("%s: left set by cleanEnv (internal/testsupport's envVars)", n)
		}
	}
}

// Each variable is one row's, and a row reads its names itself or is read
// where its comment says; the SDK's variables are replaced by the file.
func TestVariablesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range variables {
		for _, n := range v.names {
			if seen[n] {
				t.Errorf("%s: in two rows", n)
			}
			seen[n] = true
			sdk := strings.HasPrefix(n, "OTEL_EXPORTER_OTLP_") || strings.HasPrefix(n, "OTEL_BLRP_") || strings.HasPrefix(n, "OTEL_LOGRECORD_") ||
				slices.Contains([]string{"OTEL_LOGS_EXPORTER", "OTEL_SDK_DISABLED"}, n)
			if sdk != v.file {
				t.Errorf("%s: replaced by OTEL_CONFIG_FILE %v, want %v", n, v.file, sdk)
			}
		}
	}
}
