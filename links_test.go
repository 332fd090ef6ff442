package zaplens

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The README, docs/ and the godoc point at each other: every relative link
// of a page must name a file that exists and, with a #fragment, a heading
// of it; every "the README's "Section"" and docs/page.md#fragment of the
// godoc the same.
func TestDocLinks(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md")
	mdLink := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := readText(t, page)
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if err := checkLink(page, target); err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
			}
		}
	}

	goFiles, _ := filepath.Glob("*.go")
	readmeSection := regexp.MustCompile(`README's\s+"([^"]+)"|README\s+\("([^"]+)"\)`)
	docRef := regexp.MustCompile(`docs/[a-z0-9-]+\.md(#[a-z0-9-]+)?`)
	for _, f := range goFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		text := commentText(readText(t, f)) // a quote may span lines
		for _, m := range readmeSection.FindAllStringSubmatch(text, -1) {
			section := m[1] + m[2]
			if err := checkLink(f, "README.md#"+slug(section)); err != nil {
				t.Errorf("%s: the README's %q: %v", f, section, err)
			}
		}
		for _, m := range docRef.FindAllString(text, -1) {
			if err := checkLink(f, m); err != nil {
				t.Errorf("%s: %s: %v", f, m, err)
			}
		}
	}
}

// The README's Stability section names the versions of go.mod.
func TestReadmeVersions(t *testing.T) {
	required, goVersion := map[string]string{}, ""
	for line := range strings.SplitSeq(readText(t, "go.mod"), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		switch {
		case len(f) == 2 && f[0] == "go":
			goVersion = f[1]
		case len(f) >= 2 && strings.Contains(f[0], ".") && strings.HasPrefix(f[1], "v"):
			required[f[0]] = f[1]
		}
	}
	readme := readText(t, "README.md")
	_, stability, ok := strings.Cut(readme, "## Stability")
	if !ok {
		t.Fatal("the README has no Stability section")
	}
	stability = strings.Join(strings.Fields(stability), " ")
	if want := "Go " + strings.Join(strings.Split(goVersion, ".")[:2], "."); !strings.Contains(stability, want) {
		t.Errorf("the README's Stability section does not name %s, go.mod's", want)
	}
	for name, module := range map[string]string{
		"OpenTelemetry Go":                 "go.opentelemetry.io/otel",
		"`go.opentelemetry.io/proto/otlp`": "go.opentelemetry.io/proto/otlp",
		"grpc-go":                          "google.golang.org/grpc",
		"zap":                              "go.uber.org/zap",
	} {
		m := regexp.MustCompile(regexp.QuoteMeta(name) + `[^v]{0,40}?(v\d+\.\d+\.\d+)`).FindStringSubmatch(stability)
		switch {
		case m == nil:
			t.Errorf("the README's Stability section names no version of %s", name)
		case m[1] != required[module]:
			t.Errorf("the README says %s %s, go.mod requires %s %s", name, m[1], module, required[module])
		}
	}
}

// commentText is a Go file's text on one line, the comment markers left
// out.
func commentText(src string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(src, "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimSpace(line), "//") + " ")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// checkLink tells whether target, a link of the file from, names a file
// that exists and, with a #fragment into a Markdown file, a heading of it.
func checkLink(from, target string) error {
	path, frag, _ := strings.Cut(target, "#")
	file := filepath.Join(filepath.Dir(from), path)
	if path == "" {
		file = from
	}
	if _, err := os.Stat(file); err != nil {
		return err
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(stripCode(string(b)), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") && slug(h) == frag {
			return nil
		}
	}
	return fmt.Errorf("%s has no heading #%s", file, frag)
}

// slug is a heading's anchor as GitHub makes it: lower case, spaces to
// hyphens, other punctuation left out.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripCode leaves out fenced code blocks, whose text is no link.
func stripCode(md string) string {
	var b strings.Builder
	in := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
