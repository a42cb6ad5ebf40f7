package coderefsapi_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
)

// scannerBin returns LaunchDarkly's ld-find-code-refs, built by make
// test-coderefs (FLAGPLANE_CODEREFS_BIN). Without it the test skips,
// unless FLAGPLANE_REQUIRE_CODEREFS=1 (the tier sets it): then it fails.
func scannerBin(tb testing.TB) string {
	tb.Helper()
	bin := os.Getenv("FLAGPLANE_CODEREFS_BIN")
	if bin != "" {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	if os.Getenv("FLAGPLANE_REQUIRE_CODEREFS") == "1" {
		tb.Fatalf("FLAGPLANE_REQUIRE_CODEREFS=1 but the scanner binary %q (FLAGPLANE_CODEREFS_BIN) is missing: run make test-coderefs", bin)
	}
	tb.Skip("ld-find-code-refs not built; make test-coderefs runs this test")
	return ""
}

// gitRepo is a scratch git repository the scanner reads.
type gitRepo struct {
	tb  testing.TB
	dir string
}

func (g gitRepo) git(args ...string) string {
	g.tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g gitRepo) write(name, content string) {
	g.tb.Helper()
	p := filepath.Join(g.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		g.tb.Fatal(err)
	}
}

func (g gitRepo) commit(msg string) string {
	g.tb.Helper()
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

// scan runs the scanner against srv on the repository's checkout and
// fails the test when it exits non-zero or logs an error.
func scan(tb testing.TB, bin string, srv *apptest.Server, g gitRepo, extra ...string) string {
	tb.Helper()
	args := append([]string{"--dir", g.dir, "--accessToken", srv.Token, "--baseUri", srv.URL, "--projKey", "shop",
		"--repoName", "shop-app", "--contextLines", "1", "--debug"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir()}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil || strings.Contains(out.String(), "ERROR:") {
		tb.Fatalf("ld-find-code-refs %s: %v\n%s", strings.Join(extra, " "), err, out.String())
	}
	tb.Logf("ld-find-code-refs %s:\n%s", strings.Join(extra, " "), out.String())
	return out.String()
}

type hunk struct {
	StartingLineNumber int    `json:"startingLineNumber"`
	Lines              string `json:"lines"`
	ProjKey            string `json:"projKey"`
	FlagKey            string `json:"flagKey"`
}

type branch struct {
	Name       string `json:"name"`
	Head       string `json:"head"`
	SyncTime   int64  `json:"syncTime"`
	References []struct {
		Path  string `json:"path"`
		Hunks []hunk `json:"hunks"`
	} `json:"references"`
}

// flagsOf returns the flags a branch's hunks name, with their file paths.
func (b branch) flagsOf() map[string][]string {
	out := map[string][]string{}
	for _, r := range b.References {
		for _, h := range r.Hunks {
			out[h.FlagKey] = append(out[h.FlagKey], r.Path)
		}
	}
	return out
}

func getJSON(tb testing.TB, srv *apptest.Server, path string, v any) {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, path, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	res.JSON(tb, v)
}

// TestLDFindCodeRefsAgainstFlagplane runs LaunchDarkly's own scanner,
// v2.13.0, against a flagplane server: every call it makes (environments,
// flags live and archived, the repository's get, create and merge patch,
// the branch upload, extinction events, the branch list and the
// branch-delete task of its pruning) must answer as it expects, and the
// results must show through the API.
func TestLDFindCodeRefsAgainstFlagplane(t *testing.T) {
	bin := scannerBin(t)
	srv := apptest.New(t)
	srv.MustCreateProject(t, "shop")
	for _, key := range []string{"checkout-v2", "dark-mode", "never-used", "legacy-banner"} {
		if res := srv.Do(t, http.MethodPost, "/api/v2/flags/shop", map[string]any{"key": key, "name": key}); res.Status != http.StatusCreated {
			t.Fatalf("create flag %s: %d %s", key, res.Status, res.Body)
		}
	}
	// An archived flag is still looked for: the scanner asks for them apart.
	if res := srv.Do(t, http.MethodPatch, "/api/v2/flags/shop/legacy-banner", []map[string]any{{"op": "replace", "path": "/archived", "value": true}}); res.Status != http.StatusOK {
		t.Fatalf("archive legacy-banner: %d %s", res.Status, res.Body)
	}

	remote := gitRepo{t, t.TempDir()}
	remote.git("init", "-q", "--bare", "-b", "main")
	g := gitRepo{t, t.TempDir()}
	g.git("init", "-q", "-b", "main")
	g.git("remote", "add", "origin", remote.dir)
	g.write("cmd/checkout.go", "package main\n\nfunc checkout() {\n\tif client.BoolVariation(\"checkout-v2\", ctx, false) {\n\t\tnewCheckout()\n\t}\n}\n")
	g.write("web/theme.js", "// theme\nconst dark = ldClient.variation('dark-mode', false);\nexport default dark;\n")
	g.write("web/banner.js", "const banner = ldClient.variation('legacy-banner', false);\n")
	first := g.commit("Checkout v2 and dark mode behind flags")
	g.git("push", "-q", "origin", "main")

	t.Run("the first scan creates the repository and uploads the branch's references", func(t *testing.T) {
		scan(t, bin, srv, g)
		var repo struct {
			Name          string `json:"name"`
			Type          string `json:"type"`
			DefaultBranch string `json:"defaultBranch"`
			Enabled       bool   `json:"enabled"`
		}
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app", &repo)
		if repo.Name != "shop-app" || repo.Type != "custom" || repo.DefaultBranch != "main" || !repo.Enabled {
			t.Errorf("repository %+v", repo)
		}
		var b branch
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches/main", &b)
		flags := b.flagsOf()
		if b.Head != first || b.SyncTime == 0 {
			t.Errorf("branch head %q sync %d, want %q and a time", b.Head, b.SyncTime, first)
		}
		want := map[string]string{"checkout-v2": "cmd/checkout.go", "dark-mode": "web/theme.js", "legacy-banner": "web/banner.js"}
		for flag, path := range want {
			if len(flags[flag]) != 1 || flags[flag][0] != path {
				t.Errorf("references of %s: %v, want one in %s", flag, flags[flag], path)
			}
		}
		if len(flags) != len(want) {
			t.Errorf("flags referenced %v, want only %v", flags, want)
		}
		for _, r := range b.References {
			for _, h := range r.Hunks {
				if h.FlagKey == "checkout-v2" && (h.StartingLineNumber != 3 || !strings.Contains(h.Lines, `BoolVariation("checkout-v2"`)) {
					t.Errorf("checkout-v2 hunk %+v: want it to start at line 3 (one line of context) and hold the call", h)
				}
			}
		}
	})

	t.Run("a commit that removes a flag's references makes it extinct on the next scan", func(t *testing.T) {
		g.write("web/theme.js", "// theme\nexport default true;\n")
		second := g.commit("Dark mode launched: remove the dark-mode flag")
		g.git("push", "-q", "origin", "main")
		// A new URL and type make the scanner patch the repository (a JSON merge patch).
		scan(t, bin, srv, g, "--repoType", "github", "--repoUrl", "https://git.example.com/shop/app")

		var b branch
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches/main", &b)
		if b.Head != second || len(b.flagsOf()["dark-mode"]) != 0 || len(b.flagsOf()["checkout-v2"]) != 1 {
			t.Errorf("branch after the removal: head %q (want %q), flags %v", b.Head, second, b.flagsOf())
		}
		var ext struct {
			Items map[string][]struct {
				Revision string `json:"revision"`
				Message  string `json:"message"`
				Time     int64  `json:"time"`
				ProjKey  string `json:"projKey"`
				FlagKey  string `json:"flagKey"`
			} `json:"items"`
		}
		getJSON(t, srv, "/api/v2/code-refs/extinctions?repoName=shop-app&projKey=shop", &ext)
		list := ext.Items["shop-app"]
		if len(list) != 1 || list[0].FlagKey != "dark-mode" || list[0].Revision != second || list[0].ProjKey != "shop" || list[0].Time == 0 {
			t.Fatalf("extinctions %+v, want dark-mode at %s", ext.Items, second)
		}
		// The message is the commit's: the scanner's own extinction event
		// replaced the one flagplane recorded from the upload.
		if !strings.HasPrefix(list[0].Message, "Dark mode launched") {
			t.Errorf("extinction message %q, want the commit message", list[0].Message)
		}
		var repo struct {
			Type       string `json:"type"`
			SourceLink string `json:"sourceLink"`
		}
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app", &repo)
		if repo.Type != "github" || repo.SourceLink != "https://git.example.com/shop/app" {
			t.Errorf("repository after the scanner's patch: %+v", repo)
		}
		refs, err := coderefsapi.Service(srv.App).FlagReferences(t.Context(), "shop")
		if err != nil || refs["checkout-v2"] != 1 || refs["dark-mode"] != 0 || refs["legacy-banner"] != 1 {
			t.Errorf("flag references for insights: %v %v", refs, err)
		}
	})

	t.Run("an older update sequence id is refused and the scanner only warns", func(t *testing.T) {
		scan(t, bin, srv, g, "--updateSequenceId", "100")
		var before branch
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches/main", &before)
		g.write("web/theme.js", "const dark = ldClient.variation('dark-mode', true);\n")
		g.commit("Bring dark-mode back")
		out := scan(t, bin, srv, g, "--updateSequenceId", "50")
		if !strings.Contains(out, "updateSequenceId (50) must be greater") {
			t.Errorf("the scanner did not report the sequence conflict:\n%s", out)
		}
		var after branch
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches/main", &after)
		if after.Head != before.Head || len(after.flagsOf()["dark-mode"]) != 0 {
			t.Errorf("the refused upload changed the branch: head %q (was %q), flags %v", after.Head, before.Head, after.flagsOf())
		}
		scan(t, bin, srv, g, "--updateSequenceId", "101")
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches/main", &after)
		if len(after.flagsOf()["dark-mode"]) != 1 {
			t.Errorf("a newer sequence id did not land: flags %v", after.flagsOf())
		}
		g.git("push", "-q", "origin", "main")
	})

	t.Run("a branch gone from the remote is pruned by the scanner's branch-delete task", func(t *testing.T) {
		g.git("checkout", "-q", "-b", "feature/promo")
		g.write("web/promo.js", "if (ldClient.variation('never-used', false)) { promo(); }\n")
		g.commit("Promo behind never-used")
		g.git("push", "-q", "origin", "feature/promo")
		scan(t, bin, srv, g)
		var list struct {
			Items []branch `json:"items"`
		}
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches", &list)
		if len(list.Items) != 2 {
			t.Fatalf("branches %+v, want main and feature/promo", list.Items)
		}
		g.git("checkout", "-q", "main")
		g.git("push", "-q", "origin", "--delete", "feature/promo")
		scan(t, bin, srv, g)
		getJSON(t, srv, "/api/v2/code-refs/repositories/shop-app/branches", &list)
		if len(list.Items) != 1 || list.Items[0].Name != "main" {
			t.Errorf("branches after pruning %+v, want only main", list.Items)
		}
	})
}
