package endpoints_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The code-refs group's rows in the cross-cutting tables.

const codeReposPath = api + "/code-refs/repositories"

// codeRepo creates a repository whose default branch main was uploaded
// twice: first referencing the world's flag, then not, so it holds one
// extinction. It returns the repository's name.
func codeRepo(tb testing.TB, w *apptest.World) string {
	tb.Helper()
	name := w.Unique("repo")
	w.Must(tb, http.StatusOK, http.MethodPost, codeReposPath, map[string]any{"name": name, "sourceLink": "https://git.example.com/" + name})
	hunk := map[string]any{"startingLineNumber": 3, "lines": "use(flag)", "projKey": w.Project, "flagKey": w.Flag, "aliases": []string{"useFlag"}}
	for i, refs := range [][]any{{map[string]any{"path": "main.go", "hint": "go", "hunks": []any{hunk}}}, {}} {
		res := w.Srv.Do(tb, http.MethodPut, codeReposPath+"/"+name+"/branches/main", codeBranchBody("main", i, refs))
		if res.Status != http.StatusOK {
			tb.Fatalf("upload %d to %s: %d %s", i, name, res.Status, res.Body)
		}
	}
	// And a second branch, still referencing the flag.
	res := w.Srv.Do(tb, http.MethodPut, codeReposPath+"/"+name+"/branches/dev", codeBranchBody("dev", 0, []any{map[string]any{"path": "main.go", "hunks": []any{hunk}}}))
	if res.Status != http.StatusOK {
		tb.Fatalf("upload dev to %s: %d %s", name, res.Status, res.Body)
	}
	return name
}

func codeBranchBody(name string, n int, refs []any) map[string]any {
	return map[string]any{"name": name, "head": "commit-" + string(rune('a'+n)), "syncTime": 1700000000000 + n, "commitTime": 1699999999000 + n, "references": refs}
}

func init() {
	rows := map[string]func(tb testing.TB, w *apptest.World) apptest.Request{
		"getRepositories": func(tb testing.TB, w *apptest.World) apptest.Request {
			codeRepo(tb, w)
			return apptest.Request{Path: codeReposPath + "?withReferencesForDefaultBranch=1"}
		},
		"postRepository": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(codeReposPath, map[string]any{"name": w.Unique("repo"), "type": "github", "defaultBranch": "main"})
		},
		"getRepository": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: codeReposPath + "/" + codeRepo(tb, w)}
		},
		"patchRepository": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Patch(codeReposPath+"/"+codeRepo(tb, w), apptest.Replace("/defaultBranch", "dev"))
		},
		"deleteRepository": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: codeReposPath + "/" + codeRepo(tb, w)}
		},
		"getBranches": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: codeReposPath + "/" + codeRepo(tb, w) + "/branches"}
		},
		"getBranch": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: codeReposPath + "/" + codeRepo(tb, w) + "/branches/dev"}
		},
		"putBranch": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: codeReposPath + "/" + codeRepo(tb, w) + "/branches/main", Body: codeBranchBody("main", 5, []any{})}
		},
		"deleteBranches": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(codeReposPath+"/"+codeRepo(tb, w)+"/branch-delete-tasks", []string{"dev"})
		},
		"postExtinction": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(codeReposPath+"/"+codeRepo(tb, w)+"/branches/dev/extinction-events", []map[string]any{
				{"revision": "commit-z", "message": "Remove the flag", "time": 1700000000000, "projKey": w.Project, "flagKey": w.Flag}})
		},
		"getExtinctions": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: api + "/code-refs/extinctions?repoName=" + codeRepo(tb, w)}
		},
	}
	for id, row := range rows {
		answerRequests[id] = row
	}

	// The matrix's requests name a repository that does not exist (its
	// fixture has none), so only the create can succeed; the others get the
	// lenient check (past authorization, then a 4xx of their own).
	azBodies["postRepository"] = func(f *azFixture) any { return map[string]any{"name": f.unique("repo")} }
	// No timestampTable row: syncTime and time are in no part 2 section of
	// the spec, and the answers test holds them to the reference's integer.

}
