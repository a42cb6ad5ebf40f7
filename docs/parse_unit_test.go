package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	page := strings.Join([]string{
		"# Page",                           // 1
		"",                                 // 2
		"```sh",                            // 3
		"echo one",                         // 4
		"```",                              // 5
		"",                                 // 6
		"```output",                        // 7
		"one",                              // 8
		"```",                              // 9
		"## Errors",                        // 10
		"<!-- doc: http-error -->",         // 11
		"",                                 // 12
		"```sh",                            // 13
		"curl -sS \"$FP/nope\"",            // 14
		"```",                              // 15
		"<!-- doc: background -->",         // 16
		"```sh",                            // 17
		"make run",                         // 18
		"```",                              // 19
		"<!-- doc: not run: needs AWS -->", // 20
		"```sh",                            // 21
		"cdk deploy",                       // 22
		"```",                              // 23
		"<!-- doc: file sdk/main.go -->",   // 24
		"```go",                            // 25
		"package main",                     // 26
		"```",                              // 27
		"````text",                         // 28
		"```sh",                            // 29
		"not a block",                      // 30
		"```",                              // 31
		"````",                             // 32
		"",
	}, "\n")
	blocks, err := parse("docs/x.md", page)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 6 {
		t.Fatalf("got %d blocks, want 6 (the output block belongs to the first)", len(blocks))
	}
	first := blocks[0]
	t.Run("a sh block has its line, text and section", func(t *testing.T) {
		if first.lang != "sh" || first.line != 3 || first.text != "echo one\n" || first.section != "Page" {
			t.Errorf("got %+v", first)
		}
	})
	t.Run("an output block after blank lines belongs to the sh block", func(t *testing.T) {
		if first.output == nil || first.output.text != "one\n" || first.output.line != 7 {
			t.Errorf("got %+v", first.output)
		}
	})
	t.Run("directives apply to the next block, across blank lines", func(t *testing.T) {
		if !blocks[1].httpError || blocks[1].line != 13 || blocks[1].section != "Errors" {
			t.Errorf("http-error: got %+v", blocks[1])
		}
		if !blocks[2].background || blocks[2].httpError {
			t.Errorf("background: got %+v", blocks[2])
		}
		if blocks[3].notRun != "needs AWS" {
			t.Errorf("not run: got %q", blocks[3].notRun)
		}
		if blocks[4].filePath != "sdk/main.go" || blocks[4].lang != "go" {
			t.Errorf("file: got %+v", blocks[4])
		}
	})
	t.Run("a longer fence holds a shorter one as text", func(t *testing.T) {
		if blocks[5].lang != "text" || blocks[5].text != "```sh\nnot a block\n```\n" {
			t.Errorf("got %+v", blocks[5])
		}
	})
}

func TestParseRefusesTypos(t *testing.T) {
	for _, c := range []struct{ name, page, want string }{
		{"an output block with no sh block before it", "text\n\n```output\nx\n```\n", "x.md:3: an output block must follow"},
		{"an output block after text that follows the sh block", "```sh\necho\n```\nsome text\n```output\nx\n```\n", "x.md:5: an output block must follow"},
		{"two output blocks for one sh block", "```sh\necho\n```\n```output\n```\n```output\n```\n", "x.md:6: an output block must follow"},
		{"an output block after a json block", "```json\n{}\n```\n```output\n{}\n```\n", "must follow a sh block"},
		{"a directive followed by text", "<!-- doc: background -->\nsome text\n```sh\nx\n```\n", "x.md:1: the directive <!-- doc: background --> is not followed"},
		{"a directive at the end", "```sh\nx\n```\n<!-- doc: http-error -->\n", "is not followed by a code block"},
		{"an unknown directive", "<!-- doc: backgroud -->\n```sh\nx\n```\n", "unknown directive <!-- doc: backgroud -->"},
		{"not run without a reason", "<!-- doc: not run: -->\n```sh\nx\n```\n", "needs a reason"},
		{"a port that is no number", "<!-- doc: port redis -->\n```sh\nx\n```\n", "x.md:1: <!-- doc: port redis --> needs a port number"},
		{"a privileged port", "<!-- doc: port 80 -->\n```sh\nx\n```\n", "needs a port number from 1024"},
		{"an unclosed fence", "```sh\necho\n", "x.md:1: the code block is never closed"},
		{"a bash fence", "```bash\necho\n```\n", "fence shell commands as ```sh"},
		{"http-error on a json block", "<!-- doc: http-error -->\n```json\n{}\n```\n", "apply to sh blocks"},
		{"curl -s without -S", "```sh\nFP=x\ncurl -s \"$FP\" | jq .\n```\n", "x.md:3: curl -s: use -sS"},
		{"curl -sf without -S", "```sh\ncurl -sf -X POST \"$FP\"\n```\n", "curl -sf: use -sS"},
		{"three dots in a command", "```sh\ncurl -sS \"$FP/api/v2/flags/...\"\n```\n", "x.md:2: elided text"},
		{"an ellipsis in a command", "```sh\necho a…b\n```\n", "elided text"},
		{"make run in the foreground", "```sh\nmake run\n```\n", "x.md:2: \"make run\" runs until stopped"},
		{"flagplane relay in the foreground", "```sh\nFP=x\n./bin/flagplane relay -addr 127.0.0.1:8030\n```\n", "x.md:3: \"./bin/flagplane relay -addr 127.0.0.1:8030\" runs until stopped"},
	} {
		t.Run("refuses "+c.name, func(t *testing.T) {
			_, err := parse("x.md", c.page)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestPortDirective(t *testing.T) {
	page := "<!-- doc: port 18090 -->\n<!-- doc: background -->\n```sh\nserve 127.0.0.1:18090\n```\n" +
		"```sh\ncurl -sS http://127.0.0.1:18090/x; echo 180901 118090 :18090\n```\n"
	blocks, err := parse("x.md", page)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the directive names the port of its block", func(t *testing.T) {
		if len(blocks) != 2 || len(blocks[0].ports) != 1 || blocks[0].ports[0] != "18090" || !blocks[0].background {
			t.Fatalf("got %+v", blocks)
		}
	})
	t.Run("the port is replaced as a whole number in the blocks after it", func(t *testing.T) {
		s := &session{t: t}
		s.usePorts(blocks[0].ports)
		free := s.ports["18090"]
		if free == "" || free == "18090" {
			t.Fatalf("free port %q", free)
		}
		got := s.replace(blocks[1].text)
		want := "curl -sS http://127.0.0.1:" + free + "/x; echo 180901 118090 :" + free + "\n"
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestLintShellAccepts(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"curl -sS", "curl -sS \"$FP\" -H 'Authorization: x'\n"},
		{"curl -fsS and -sSL", "curl -fsS \"$FP\"\ncurl -sSL \"$FP\"\n"},
		{"-s after a pipe, for another command", "curl -sS \"$FP\" | jq -s .\n"},
		{"three dots in a comment", "# then the rest ...\necho ok # and so on...\n"},
		{"a server sent to the background", "flagplane serve -addr 127.0.0.1:9090 &\nflagplane token create -name ci\nmake run-other\n"},
	} {
		t.Run("accepts "+c.name, func(t *testing.T) {
			if err := lintShell(&block{file: "x.md", line: 1, lang: "sh", text: c.text}); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestQuickStart(t *testing.T) {
	readme := strings.Join([]string{
		"# flagplane",                // 1
		"```sh",                      // 2
		"go version",                 // 3
		"```",                        // 4
		"## Quick start",             // 5
		"```sh",                      // 6
		"# a comment, not a heading", // 7
		"FP=x",                       // 8
		"```",                        // 9
		"### A step",                 // 10
		"```sh",                      // 11
		"curl -sS \"$FP\"",           // 12
		"```",                        // 13
		"## Connecting an SDK",       // 14
		"```sh",                      // 15
		"SDK_KEY=x",                  // 16
		"```",                        // 17
		"",
	}, "\n")
	t.Run("takes the blocks under the heading, subsections included, up to the next heading of its level", func(t *testing.T) {
		blocks, err := quickStart("README.md", readme)
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) != 2 || blocks[0].line != 6 || blocks[1].line != 11 {
			t.Fatalf("got %d blocks: %+v", len(blocks), blocks)
		}
	})
	t.Run("fails without a Quick start heading", func(t *testing.T) {
		if _, err := quickStart("README.md", "# x\n```sh\necho\n```\n"); err == nil {
			t.Error("got no error")
		}
	})
}

func TestMatchOutput(t *testing.T) {
	for _, c := range []struct {
		name      string
		want, got string
		match     bool
	}{
		{"the same lines match", "a\nb\n", "a\nb\n", true},
		{"trailing spaces and a missing final newline are ignored", "a  \nb\n", "a\nb", true},
		{"trailing empty lines are ignored", "a\n", "a\n\n\n", true},
		{"a different line fails", "a\nb\n", "a\nc\n", false},
		{"a missing line fails", "a\nb\n", "a\n", false},
		{"an extra line fails", "a\n", "a\nb\n", false},
		{"leading spaces count", "a\n", "  a\n", false},
		{"an ellipsis in a line matches any text", `{"code":"conflict",…}`, `{"code":"conflict","message":"exists"}`, true},
		{"an ellipsis matches empty text", "ab…", "ab", true},
		{"text around ellipses must appear in order", "a…b…c", "a-c-b", false},
		{"ellipses at both ends", "…key…", `{"key":"x"}`, true},
		{"the text before an ellipsis is a prefix", "x…", "ax", false},
		{"an ellipsis does not cross lines", "a…\nc\n", "a\nb\nc\n", false},
		{"a line of only an ellipsis matches no lines", "a\n…\nb\n", "a\nb\n", true},
		{"a line of only an ellipsis matches many lines", "a\n…\nd\n", "a\nb\nc\nd\n", true},
		{"a line of only an ellipsis at the end matches the rest", "a\n…\n", "a\nb\nc\n", true},
		{"a line of only an ellipsis still needs what follows", "…\nz\n", "a\nb\n", false},
		{"an empty output matches nothing printed", "", "", true},
		{"an empty output does not match printed text", "", "x\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := matchOutput(c.want, c.got); got != c.match {
				t.Errorf("matchOutput(%q, %q) = %v, want %v", c.want, c.got, got, c.match)
			}
		})
	}
}

func TestDiffOutput(t *testing.T) {
	t.Run("marks expected-only lines with - and printed-only lines with +", func(t *testing.T) {
		got := diffOutput("a\nb\nc\n", "a\nx\nc\n")
		want := "  a\n+ x\n- b\n  c\n"
		if got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("a line with an ellipsis that matches shows as common", func(t *testing.T) {
		got := diffOutput("id …\nok\n", "id 42\nfail\n")
		want := "  id 42\n+ fail\n- ok\n"
		if got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
}

// TestPagesParse reads README.md and every docs/*.md page as TestDocs
// does, without running them: a typo in a page's conventions fails here,
// in test-unit, too.
func TestPagesParse(t *testing.T) {
	pages, _ := filepath.Glob("*.md")
	pages = append([]string{"../README.md"}, pages...)
	for _, p := range pages {
		name := strings.TrimPrefix(filepath.ToSlash(filepath.Join("docs", p)), "docs/../")
		t.Run(name+" follows the conventions", func(t *testing.T) {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parse(name, string(text)); err != nil {
				t.Fatal(err)
			}
			if name == "README.md" {
				if _, err := quickStart(name, string(text)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
