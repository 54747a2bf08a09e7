package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"countwall/internal/cli"
)

// docCommand is a countwall command line read from a page: the words after
// `countwall` (or `go run .`) up to the end of the shell command.
type docCommand struct {
	n    int
	args []string
}

// commandLines reads every countwall command a page shows: in fenced code
// (lines joined across a trailing backslash) and in code spans of prose.
func (p mdPage) commandLines() []docCommand {
	var out []docCommand
	for _, l := range joinContinued(p.fenced) {
		for _, args := range shellCommands(shellWords(l.text)) {
			out = append(out, docCommand{n: l.n, args: args})
		}
	}
	for _, l := range p.prose {
		for _, span := range codeSpan.FindAllString(l.text, -1) {
			span = strings.ReplaceAll(strings.Trim(span, "`"), `\|`, "|")
			if strings.HasPrefix(span, "countwall ") || strings.HasPrefix(span, "go run . ") {
				for _, args := range shellCommands(shellWords(span)) {
					out = append(out, docCommand{n: l.n, args: args})
				}
			}
		}
	}
	return out
}

// goTestPackages are the package directories the page's `go test ./PKG`
// commands name, in code blocks and code spans.
func (p mdPage) goTestPackages() []mdLine {
	var lines []mdLine
	lines = append(lines, joinContinued(p.fenced)...)
	for _, l := range p.prose {
		for _, span := range codeSpan.FindAllString(l.text, -1) {
			lines = append(lines, mdLine{n: l.n, text: strings.Trim(span, "`")})
		}
	}
	var out []mdLine
	for _, l := range lines {
		words := shellWords(l.text)
		for i := 0; i+2 < len(words); i++ {
			if words[i] == "go" && words[i+1] == "test" {
				for _, w := range words[i+2:] {
					if strings.HasPrefix(w, "./") {
						out = append(out, mdLine{n: l.n, text: filepath.Clean(strings.TrimSuffix(w, "/..."))})
					}
				}
			}
		}
	}
	return out
}

// joinContinued joins each line ending in a backslash with the next.
func joinContinued(lines []mdLine) []mdLine {
	var out []mdLine
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(l.text, `\`) && i+1 < len(lines) {
			i++
			l.text = strings.TrimSuffix(l.text, `\`) + " " + lines[i].text
		}
		out = append(out, l)
	}
	return out
}

// shellWords splits a line as a shell would, enough for the docs: quotes
// keep their words whole (and are dropped), a # starting a word begins a
// comment, and the operators |, ;, &&, ||, &, (, ) and redirections are
// words of their own.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			return words
		case strings.ContainsRune("|;&()<>", r) && !(r == '|' && inWord):
			flush()
			op := string(r)
			for i+1 < len(runes) && strings.ContainsRune("|&>", runes[i+1]) && op != ";" {
				i++
				op += string(runes[i])
			}
			words = append(words, op)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words
}

// shellCommands picks out of a line's words each countwall command (or `go
// run .`) that stands where a shell runs a command: at the start, after an
// operator, after VAR=value settings, a `$` prompt or a time/nohup wrapper.
func shellCommands(words []string) [][]string {
	var out [][]string
	atCommand := true
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case isShellOperator(w):
			atCommand = true
		case !atCommand:
		case w == "$" || strings.Contains(w, "=") && !strings.HasPrefix(w, "-") || w == "time" || w == "/usr/bin/time" || w == "nohup" || strings.HasPrefix(w, "-") && i > 0 && strings.HasSuffix(words[i-1], "time"):
			// still at the command's position
		case w == "countwall" || w == "go" && i+2 < len(words) && words[i+1] == "run" && words[i+2] == ".":
			if w == "go" {
				i += 2
			}
			end := i + 1
			for end < len(words) && !isShellOperator(words[end]) {
				end++
			}
			out = append(out, words[i+1:end])
			i = end - 1
			atCommand = false
		default:
			atCommand = false
		}
	}
	return out
}

func isShellOperator(w string) bool {
	return w != "" && strings.ContainsAny(w[:1], "|;&()<>")
}

// checkCommandLine walks the command tree as cobra would: subcommands by
// name (a|b names each), then every flag looked up on the command found.
// Placeholders (NAME, FILE, ...) stand for words the reader supplies.
func checkCommandLine(args []string) error {
	cmd := cli.New()
	positional := 0
	for i := 0; i < len(args); i++ {
		w := strings.TrimSuffix(strings.TrimPrefix(args[i], "["), "]")
		if w == "--" {
			return nil
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			flag, err := lookupFlag(cmd, w)
			if err != nil {
				return err
			}
			if flag != nil && flag.Value.Type() != "bool" && !strings.Contains(w, "=") {
				i++ // the flag's value
			}
			continue
		}
		if isPlaceholder(w) {
			if positional == 0 && cmd.HasSubCommands() {
				return nil // a subcommand the reader chooses: its flags are its own
			}
			positional++
			continue
		}
		if positional == 0 && cmd.HasSubCommands() {
			next, err := subcommand(cmd, w)
			if err != nil {
				return err
			}
			if next != nil {
				cmd = next
				continue
			}
		}
		positional++
	}
	return nil
}

// subcommand is the child of cmd that word names; a word naming several
// (list|grant|reset) must name a child each, and the first is walked.
func subcommand(cmd *cobra.Command, word string) (*cobra.Command, error) {
	var first *cobra.Command
	for _, name := range strings.Split(word, "|") {
		var found *cobra.Command
		for _, c := range cmd.Commands() {
			if c.Name() == name || c.HasAlias(name) {
				found = c
			}
		}
		if found == nil {
			if cmd.Args == nil && cmd.Runnable() && !strings.Contains(word, "|") {
				return nil, nil // an argument of a command that takes them
			}
			return nil, fmt.Errorf("%q has no subcommand %q", cmd.CommandPath(), name)
		}
		if first == nil {
			first = found
		}
	}
	return first, nil
}

// lookupFlag finds a flag word (--name, --name=value, -x) on cmd or one it
// inherits; help is every command's.
func lookupFlag(cmd *cobra.Command, word string) (*pflag.Flag, error) {
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	if name == "help" || name == "h" {
		return nil, nil
	}
	var f *pflag.Flag
	for _, set := range []*pflag.FlagSet{cmd.LocalFlags(), cmd.InheritedFlags()} {
		if f == nil && strings.HasPrefix(word, "--") {
			f = set.Lookup(name)
		} else if f == nil && len(name) == 1 {
			f = set.ShorthandLookup(name)
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%q has no flag %s", cmd.CommandPath(), word)
	}
	return f, nil
}

// isPlaceholder reports whether a word stands for one the reader supplies:
// NAME, FILE, SQL, ... or an ellipsis.
func isPlaceholder(w string) bool {
	if strings.Contains(w, "...") {
		return true
	}
	letters := strings.TrimRight(w, ".")
	return letters != "" && strings.ToUpper(letters) == letters && strings.ToLower(letters) != letters
}

// TestDocsCommandChecksCatchPlants: the command check refuses an unknown
// command or flag and accepts what the tree has.
func TestDocsCommandChecksCatchPlants(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
	}{
		{"countwall serve --config FILE --log-level warn", true},
		{"countwall budget grant alice --kind dp --epsilon 0.5 --config c.yaml", true},
		{"countwall budget list|grant|reset", true},
		{"countwall attack NAME --help", true},
		{`GOGC=400 countwall serve --config idp.yaml --log-level warn &`, true},
		{"go run . demo --no-attacks", true},
		{"countwall serve --config c.yaml --no-such-flag", false},
		{"countwall attack idp-reconstruct --emit", false},
		{"countwall budget lst", false},
		{"countwall budget list|grant|rest", false},
		{"countwall nosuch --config c.yaml", false},
	}
	for _, c := range cases {
		page := parsePage("plant.md", "```sh\n"+c.line+"\n```\n")
		lines := page.commandLines()
		if len(lines) != 1 {
			t.Errorf("%s: read %d command lines, want 1", c.line, len(lines))
			continue
		}
		if err := checkCommandLine(lines[0].args); (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok %v", c.line, err, c.ok)
		}
	}
}
