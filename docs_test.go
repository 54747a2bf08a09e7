package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The README is read first, in full: it stays short, and the rest goes to
// docs/ by reader.
const readmeMaxLines = 250

// docFiles are the pages a person reads: the README and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md: run the test from the module root")
	}
	return append([]string{"README.md"}, pages...)
}

// mdPage is a markdown page split into what the checks read: prose lines
// (outside fenced code) and the lines of each fenced block.
type mdPage struct {
	path   string
	prose  []mdLine
	fenced []mdLine
}

// mdLine is one line of a page with its 1-based number, for messages.
type mdLine struct {
	n    int
	text string
}

func readPage(path string) (mdPage, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return mdPage{}, err
	}
	return parsePage(path, string(raw)), nil
}

func parsePage(path, text string) mdPage {
	p := mdPage{path: path}
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		l := mdLine{n: i + 1, text: line}
		if inFence {
			p.fenced = append(p.fenced, l)
		} else {
			p.prose = append(p.prose, l)
		}
	}
	return p
}

var (
	codeSpan  = regexp.MustCompile("`[^`]*`")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// links are the targets of the page's links and images, outside code.
func (p mdPage) links() []mdLine {
	var out []mdLine
	for _, l := range p.prose {
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
			out = append(out, mdLine{n: l.n, text: m[1]})
		}
	}
	return out
}

// anchors are the ids GitHub gives the page's headings.
func (p mdPage) anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range p.prose {
		m := mdHeading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := headingSlug(m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// headingSlug is GitHub's anchor for a heading: its text in lower case,
// markup and punctuation dropped, spaces turned into hyphens.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// checkLinks returns a problem for each relative link of page that names no
// file, or a heading its target does not have. pages holds every page read,
// by path, so that anchors into them can be checked.
func checkLinks(page mdPage, pages map[string]mdPage) []string {
	var problems []string
	for _, l := range page.links() {
		target := l.text
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := page.path
		if file != "" {
			path = filepath.Join(filepath.Dir(page.path), file)
			if _, err := os.Stat(path); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q names no file (%s)", page.path, l.n, target, path))
				continue
			}
		}
		if anchor == "" {
			continue
		}
		linked, ok := pages[filepath.Clean(path)]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q has an anchor into a page that is not markdown", page.path, l.n, target))
		} else if !linked.anchors()[anchor] {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q names no heading of %s", page.path, l.n, target, linked.path))
		}
	}
	return problems
}

func readPages(t *testing.T) map[string]mdPage {
	t.Helper()
	pages := map[string]mdPage{}
	for _, path := range docFiles(t) {
		p, err := readPage(path)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Clean(path)] = p
	}
	return pages
}

// TestDocsLinksNameRealFiles: every relative link of the README and docs/
// names a file of the tree, and every anchor a heading of its page.
func TestDocsLinksNameRealFiles(t *testing.T) {
	pages := readPages(t)
	links := 0
	for _, p := range pages {
		links += len(p.links())
		for _, problem := range checkLinks(p, pages) {
			t.Error(problem)
		}
	}
	if links < 50 {
		t.Errorf("only %d links read from the docs: the reader has lost them", links)
	}
}

// TestDocsCommandsNameRealFlags: every countwall command line the docs
// show, in code blocks and in code spans, names a real command and only
// flags that command has; every `go test ./PKG` names a package directory.
func TestDocsCommandsNameRealFlags(t *testing.T) {
	checked := 0
	for _, p := range readPages(t) {
		for _, c := range p.commandLines() {
			checked++
			if err := checkCommandLine(c.args); err != nil {
				t.Errorf("%s:%d: %s: %v", p.path, c.n, strings.Join(c.args, " "), err)
			}
		}
		for _, l := range p.goTestPackages() {
			if info, err := os.Stat(l.text); err != nil || !info.IsDir() {
				t.Errorf("%s:%d: go test %s names no package directory", p.path, l.n, l.text)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d command lines read from the docs: the reader has lost them", checked)
	}
}

// TestDocsREADMEStaysShort: the README is read in ten minutes.
func TestDocsREADMEStaysShort(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, over %d: move the detail to the page of docs/ for its reader", n, readmeMaxLines)
	}
}

// TestDocsChecksCatchPlants: the checks above fail on what they are for,
// so that a check that passes means something.
func TestDocsChecksCatchPlants(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	if err := os.WriteFile(good, []byte("# A page\n\n## Its part: one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goodPage, err := readPage(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, text string
		problems   int
	}{
		{"a file that exists, with its heading", "[a](good.md#its-part-one) and [b](#here)\n\n# Here\n", 0},
		{"a file that does not exist", "see [the guide](missing.md)\n", 1},
		{"a heading the page does not have", "see [the part](good.md#no-such-part)\n", 1},
		{"a link inside code is not read", "`[a](missing.md)`\n```\n[b](missing.md)\n```\n", 0},
		{"a web address is not a file", "[go](https://go.dev/x.md)\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := parsePage(filepath.Join(dir, "page.md"), c.text)
			pages := map[string]mdPage{filepath.Clean(good): goodPage, filepath.Clean(page.path): page}
			if got := checkLinks(page, pages); len(got) != c.problems {
				t.Errorf("%d problems, want %d: %q", len(got), c.problems, got)
			}
		})
	}
}
