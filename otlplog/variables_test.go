package otlplog

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docVariable is a row of docs/configuration.md's table of the pipeline's
// variables.
type docVariable struct{ def, option string }

// documentedVariables reads the table of "The pipeline's variables" in
// docs/configuration.md, by variable: its default and its option, each
// [LOGS_] form spelt out.
func documentedVariables(t *testing.T) map[string]docVariable {
	t.Helper()
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The pipeline's variables\n")
	if !ok {
		t.Fatal("docs/configuration.md has no section \"The pipeline's variables\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`((?:OTEL|ZAPLENS)_[A-Z0-9_\\[\\]]+)`")
	out := map[string]docVariable{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(line, "| `") {
			continue // not a row of the table, or its head
		}
		row := docVariable{def: cells[3], option: strings.Trim(strings.TrimSpace(cells[4]), "`")}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			forms := []string{m[1]}
			if strings.Contains(m[1], "[LOGS_]") {
				forms = []string{strings.Replace(m[1], "[LOGS_]", "LOGS_", 1), strings.Replace(m[1], "[LOGS_]", "", 1)}
			}
			for _, n := range forms {
				if _, dup := out[n]; dup {
					t.Errorf("%s: documented twice", n)
				}
				out[n] = row
			}
		}
	}
	return out
}

// The table of variables and the documentation's list the same variables,
// each with the same option and default: a variable added to one and not
// the other fails here.
func TestVariablesDocumented(t *testing.T) {
	docs := documentedVariables(t)
	seen := map[string]bool{}
	for _, v := range variables {
		for _, n := range v.names {
			seen[n] = true
			d, ok := docs[n]
			switch {
			case !ok:
				t.Errorf("%s: read (variables.go) but not in docs/configuration.md", n)
			case d.option != v.option:
				t.Errorf("%s: option %q in variables.go, %q in docs/configuration.md", n, v.option, d.option)
			case !strings.Contains(d.def, v.def):
				t.Errorf("%s: default %q in variables.go, not in docs/configuration.md's %q", n, v.def, strings.TrimSpace(d.def))
			}
		}
	}
	for n := range docs {
		if !seen[n] {
			t.Errorf("%s: in docs/configuration.md but not read (variables.go)", n)
		}
	}
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
