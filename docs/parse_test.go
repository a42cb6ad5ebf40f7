package docs_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The docs' conventions as the runner reads them (see docs_test.go).

// block is one fenced code block of a page.
type block struct {
	file    string // as the failure names it: README.md, docs/x.md
	line    int    // the opening fence's line, from 1
	lang    string // the info string's first word: sh, output, go, json
	text    string // the lines between the fences, each ending in "\n"
	section string // the text of the nearest heading above it

	background bool     // <!-- doc: background -->
	httpError  bool     // <!-- doc: http-error -->
	notRun     string   // <!-- doc: not run: reason --> (the reason; "" if it runs)
	filePath   string   // <!-- doc: file path -->: written to path in the session's directory
	ports      []string // <!-- doc: port N -->: N stands for a free port from this block on

	output *block // the ```output block right after a sh block
}

func (b *block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var (
	directiveRE = regexp.MustCompile(`^<!--\s*doc:\s*(.*?)\s*-->$`)
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceRE     = regexp.MustCompile("^ {0,3}(`{3,})\\s*([^`\\s]*)")
	// A command that serves until stopped, unless sent to the background.
	serverRE = regexp.MustCompile(`^\s*(make run|(\./bin/|\S*/)?flagplane (serve|relay))(\s[^&]*)?$`)
)

// shellNames are info strings meant as shell that the runner would not run:
// a page must say sh (runs) or another name such as text (does not).
var shellNames = map[string]bool{"bash": true, "shell": true, "console": true, "zsh": true}

// parse reads a page's code blocks in order. It fails on what is surely a
// typo: a directive not followed by a code block, an unknown directive, an
// output block that does not follow a sh block, an unclosed fence, a shell
// block fenced other than sh.
func parse(file, text string) ([]*block, error) {
	var (
		blocks  []*block
		pending []string // directives waiting for their block
		pendAt  int
		lastSh  *block // a sh block with only blank lines since
		section string
	)
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		raw := strings.TrimRight(lines[i], "\r\n")
		trimmed := strings.TrimSpace(raw)
		m := fenceRE.FindStringSubmatch(raw)
		if m == nil {
			switch {
			case trimmed == "":
				continue
			case directiveRE.MatchString(trimmed):
				if len(pending) == 0 {
					pendAt = i + 1
				}
				pending = append(pending, directiveRE.FindStringSubmatch(trimmed)[1])
				lastSh = nil
				continue
			}
			if len(pending) > 0 {
				return nil, fmt.Errorf("%s:%d: the directive <!-- doc: %s --> is not followed by a code block", file, pendAt, pending[0])
			}
			if h := headingRE.FindStringSubmatch(raw); h != nil {
				section = h[2]
			}
			lastSh = nil
			continue
		}
		ticks, lang := m[1], m[2]
		b := &block{file: file, line: i + 1, lang: lang, section: section}
		var body strings.Builder
		closed := false
		for i++; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\r\n")
			if t := strings.TrimSpace(l); strings.HasPrefix(t, ticks) && strings.Trim(t, "`") == "" {
				closed = true
				break
			}
			body.WriteString(l + "\n")
		}
		if !closed {
			return nil, fmt.Errorf("%s: the code block is never closed", b.where())
		}
		b.text = body.String()
		for _, d := range pending {
			switch {
			case d == "background":
				b.background = true
			case d == "http-error":
				b.httpError = true
			case strings.HasPrefix(d, "not run:"):
				b.notRun = strings.TrimSpace(strings.TrimPrefix(d, "not run:"))
				if b.notRun == "" {
					return nil, fmt.Errorf("%s: <!-- doc: not run: --> needs a reason", b.where())
				}
			case strings.HasPrefix(d, "file "):
				b.filePath = strings.TrimSpace(strings.TrimPrefix(d, "file "))
			case strings.HasPrefix(d, "port "):
				port := strings.TrimSpace(strings.TrimPrefix(d, "port "))
				if n, err := strconv.Atoi(port); err != nil || n < 1024 || n > 65535 || strconv.Itoa(n) != port {
					return nil, fmt.Errorf("%s:%d: <!-- doc: port %s --> needs a port number from 1024 to 65535", file, pendAt, port)
				}
				b.ports = append(b.ports, port)
			default:
				return nil, fmt.Errorf("%s:%d: unknown directive <!-- doc: %s --> (known: background, http-error, not run: <reason>, file <path>, port <n>)", file, pendAt, d)
			}
		}
		pending = nil
		if b.lang != "sh" && (b.background || b.httpError) {
			return nil, fmt.Errorf("%s: background and http-error apply to sh blocks, not to %q", b.where(), b.lang)
		}
		if shellNames[b.lang] {
			return nil, fmt.Errorf("%s: a ```%s block: fence shell commands as ```sh (they run as tests) or a sample as ```text", b.where(), b.lang)
		}
		if b.lang == "output" {
			if lastSh == nil {
				return nil, fmt.Errorf("%s: an output block must follow a sh block (only blank lines between)", b.where())
			}
			lastSh.output = b
			lastSh = nil
			continue
		}
		lastSh = nil
		if b.lang == "sh" {
			if err := lintShell(b); err != nil {
				return nil, err
			}
			lastSh = b
		}
		blocks = append(blocks, b)
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("%s:%d: the directive <!-- doc: %s --> is not followed by a code block", file, pendAt, pending[0])
	}
	return blocks, nil
}

// quickStart is the README's blocks under its "Quick start" heading (up to
// the next heading of the same or a higher level), which every page's run
// starts with.
func quickStart(file, text string) ([]*block, error) {
	var section strings.Builder
	level := 0
	fence := ""
	for _, l := range strings.SplitAfter(text, "\n") {
		var h []string
		if m := fenceRE.FindStringSubmatch(l); m != nil && fence == "" {
			fence = m[1]
		} else if t := strings.TrimSpace(l); fence != "" && strings.HasPrefix(t, fence) && strings.Trim(t, "`") == "" {
			fence = ""
		} else if fence == "" {
			h = headingRE.FindStringSubmatch(strings.TrimRight(l, "\r\n"))
		}
		if h != nil && level == 0 && strings.EqualFold(h[2], "Quick start") {
			level = len(h[1])
		} else if h != nil && level > 0 && len(h[1]) <= level {
			break
		}
		if level > 0 {
			section.WriteString(l)
		} else {
			section.WriteString("\n") // keeps line numbers
		}
	}
	if level == 0 {
		return nil, fmt.Errorf("%s: no \"Quick start\" heading", file)
	}
	return parse(file, section.String())
}

// ellipsis in an expected line matches any text; a line of only ellipsis
// any number of lines.
const ellipsis = "…"

// matchLine reports whether got matches the expected line want.
func matchLine(want, got string) bool {
	want, got = strings.TrimRight(want, " \t\r"), strings.TrimRight(got, " \t\r")
	parts := strings.Split(want, ellipsis)
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	return strings.HasSuffix(got, last)
}

// splitLines is text's lines with trailing whitespace and trailing empty
// lines removed.
func splitLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matchOutput reports whether got (a block's stdout) matches want (its
// output block's text).
func matchOutput(want, got string) bool {
	w, g := splitLines(want), splitLines(got)
	memo := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(w) {
			return j == len(g)
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var ok bool
		if strings.TrimSpace(w[i]) == ellipsis {
			ok = match(i+1, j) || (j < len(g) && match(i, j+1))
		} else {
			ok = j < len(g) && matchLine(w[i], g[j]) && match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	return match(0, 0)
}

// diffOutput shows want against got line by line: "  " both, "- " expected
// only, "+ " printed only (a longest common subsequence, lines compared by
// matchLine; a line of only ellipsis matches nothing here and shows as -).
func diffOutput(want, got string) string {
	w, g := splitLines(want), splitLines(got)
	n, m := len(w), len(g)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if matchLine(w[i], g[j]) && strings.TrimSpace(w[i]) != ellipsis {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && matchLine(w[i], g[j]) && strings.TrimSpace(w[i]) != ellipsis:
			b.WriteString("  " + g[j] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			b.WriteString("+ " + g[j] + "\n")
			j++
		default:
			b.WriteString("- " + w[i] + "\n")
			i++
		}
	}
	return b.String()
}

// lintShell holds a sh block to the conventions a reader relies on: curl
// with -sS (-s alone hides errors), and no elided text ("..." or "…")
// outside comments, since blocks must run as printed.
func lintShell(b *block) error {
	for i, l := range strings.Split(b.text, "\n") {
		code := l
		if j := strings.Index(code, "#"); j >= 0 && (j == 0 || code[j-1] == ' ' || code[j-1] == '\t') {
			code = code[:j]
		}
		if !b.background && b.notRun == "" && serverRE.MatchString(code) {
			return fmt.Errorf("%s:%d: %q runs until stopped: mark its block <!-- doc: background --> (or end the line with &)", b.file, b.line+1+i, strings.TrimSpace(code))
		}
		if strings.Contains(code, "...") || strings.Contains(code, ellipsis) {
			return fmt.Errorf("%s:%d: elided text (... or …) in a sh block: blocks run as printed", b.file, b.line+1+i)
		}
		for _, cmd := range strings.Split(code, "|") {
			f := strings.Fields(cmd)
			for k := 0; k < len(f); k++ {
				if f[k] != "curl" {
					continue
				}
				for _, a := range f[k+1:] {
					if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "s") && !strings.Contains(a, "S") {
						return fmt.Errorf("%s:%d: curl %s: use -sS, so that errors show", b.file, b.line+1+i, a)
					}
				}
			}
		}
	}
	return nil
}
