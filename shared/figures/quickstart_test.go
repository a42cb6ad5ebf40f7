package figures_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// semanticPatch marks a request sent as a semantic patch.
const semanticPatch = "domain-model=flagplane.semanticpatch"

// TestQuickStartMatchesSmoke holds the README's quick start and
// localstack/smoke.sh (which make test runs against a real server) to the
// same requests, so a README edit the smoke test does not cover fails here
// instead of going unchecked.
func TestQuickStartMatchesSmoke(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	smoke, err := os.ReadFile(filepath.Join(root, "localstack", "smoke.sh"))
	if err != nil {
		t.Fatal(err)
	}
	quick := section(t, string(readme), "## Quick start")
	inREADME := quickStartRequests(quick)
	inSmoke := smokeRequests(string(smoke))
	t.Logf("quick start: %q\nsmoke test: %q", inREADME, inSmoke)

	t.Run("the quick start makes a project, an environment and a flag, turns it on, evaluates it and reads the audit log", func(t *testing.T) {
		for _, want := range []string{
			"POST /api/v2/projects",
			"POST /api/v2/projects/{project}/environments",
			"POST /api/v2/flags/{project}",
			"PATCH /api/v2/flags/{project}/{flag} " + semanticPatch,
			"POST /api/v2/projects/{project}/environments/{env}/flags/evaluate",
			"GET /api/v2/auditlog",
		} {
			if !slices.Contains(inREADME, want) {
				t.Errorf("the quick start lacks %s; it has %q", want, inREADME)
			}
		}
	})
	t.Run("the quick start sets FP and TOKEN as the docs pages expect them", func(t *testing.T) {
		// Every docs page continues from the quick start with these two
		// variables, and the docs tier replaces this address and token.
		for _, want := range []string{"\nFP=http://127.0.0.1:8080\n", "\nTOKEN=api-2b1f0c1e-7a53-4d7c-9a51-0d4f7c2e9b10\n"} {
			if !strings.Contains(quick, want) {
				t.Errorf("the quick start lacks the line %q", strings.TrimSpace(want))
			}
		}
	})
	t.Run("every request of the quick start is one the smoke test makes", func(t *testing.T) {
		for _, r := range inREADME {
			if !slices.Contains(inSmoke, r) {
				t.Errorf("the quick start's %s is not in localstack/smoke.sh, which makes %q", r, inSmoke)
			}
		}
	})
}

// section is the text from heading to the next heading of its level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	rest := doc[start+1+len(heading):]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// joinContinued joins shell lines continued with a trailing backslash.
func joinContinued(s string) []string {
	return strings.Split(regexp.MustCompile(`\\\n\s*`).ReplaceAllString(s, " "), "\n")
}

var (
	curlMethod = regexp.MustCompile(`-X ([A-Z]+)`)
	curlURL    = regexp.MustCompile(`"\$FP(/[^"?]*)`)
	smokeCall  = regexp.MustCompile(`^\s*request "[^"]*" [0-9]+ ([A-Z]+) "?([^" ?]+)`)
)

// quickStartRequests lists the curl requests of the README's quick start
// as "METHOD path [semantic patch]", with the example keys as placeholders.
func quickStartRequests(quick string) []string {
	keys := strings.NewReplacer("/shop", "/{project}", "/staging", "/{env}", "/new-checkout", "/{flag}")
	var out []string
	for _, line := range joinContinued(quick) {
		if !strings.HasPrefix(strings.TrimSpace(line), "curl ") {
			continue
		}
		method := "GET"
		if m := curlMethod.FindStringSubmatch(line); m != nil {
			method = m[1]
		}
		u := curlURL.FindStringSubmatch(line)
		if u == nil {
			out = append(out, "unparsed: "+line)
			continue
		}
		out = append(out, describe(method, keys.Replace(u[1]), line))
	}
	return out
}

// smokeRequests lists the requests of localstack/smoke.sh the same way.
func smokeRequests(script string) []string {
	keys := strings.NewReplacer("$p", "{project}", "$env", "{env}", "$FLAG", "{flag}")
	var out []string
	for _, line := range joinContinued(script) {
		if m := smokeCall.FindStringSubmatch(line); m != nil {
			out = append(out, describe(m[1], keys.Replace(m[2]), line))
		}
	}
	return out
}

func describe(method, path, line string) string {
	if strings.Contains(line, semanticPatch) {
		return method + " " + path + " " + semanticPatch
	}
	return method + " " + path
}
