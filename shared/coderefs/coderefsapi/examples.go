package coderefsapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// exampleRepo creates a repository whose default branch main was uploaded
// twice, first referencing the world's flag, then not, so it holds one
// extinction, and a branch dev still referencing it. It returns the
// repository's name.
func exampleRepo(w *example.World) string {
	name := w.Unique("repo")
	w.Must(http.StatusOK, http.MethodPost, reposPath, map[string]any{"name": name, "sourceLink": "https://git.example.com/" + name})
	hunk := map[string]any{"startingLineNumber": 3, "lines": "use(flag)", "projKey": w.Project, "flagKey": w.Flag, "aliases": []string{"useFlag"}}
	for i, refs := range [][]any{{map[string]any{"path": "main.go", "hint": "go", "hunks": []any{hunk}}}, {}} {
		w.Must(http.StatusOK, http.MethodPut, reposPath+"/"+name+"/branches/main", exampleBranch("main", i, refs))
	}
	w.Must(http.StatusOK, http.MethodPut, reposPath+"/"+name+"/branches/dev", exampleBranch("dev", 0, []any{map[string]any{"path": "main.go", "hunks": []any{hunk}}}))
	return name
}

func exampleBranch(name string, n int, refs []any) map[string]any {
	return map[string]any{"name": name, "head": "commit-" + string(rune('a'+n)), "syncTime": 1700000000000 + n, "commitTime": 1699999999000 + n, "references": refs}
}

func examples() example.Set {
	repo := func(w *example.World) string { return reposPath + "/" + exampleRepo(w) }
	return example.Set{Calls: map[string]example.Example{
		"getRepositories": func(w *example.World) example.Call {
			exampleRepo(w)
			return example.Get(reposPath + "?withReferencesForDefaultBranch=1")
		},
		"postRepository": func(w *example.World) example.Call {
			return example.Post(reposPath, map[string]any{"name": w.Unique("repo"), "type": "github", "defaultBranch": "main"})
		},
		"getRepository": func(w *example.World) example.Call { return example.Get(repo(w)) },
		"patchRepository": func(w *example.World) example.Call {
			return example.Patch(repo(w), example.Replace("/defaultBranch", "dev"))
		},
		"deleteRepository": func(w *example.World) example.Call { return example.Get(repo(w)) },
		"getBranches":      func(w *example.World) example.Call { return example.Get(repo(w) + "/branches") },
		"getBranch":        func(w *example.World) example.Call { return example.Get(repo(w) + "/branches/dev") },
		"putBranch": func(w *example.World) example.Call {
			return example.Post(repo(w)+"/branches/main", exampleBranch("main", 5, []any{}))
		},
		"deleteBranches": func(w *example.World) example.Call {
			return example.Post(repo(w)+"/branch-delete-tasks", []string{"dev"})
		},
		"postExtinction": func(w *example.World) example.Call {
			return example.Post(repo(w)+"/branches/dev/extinction-events", []map[string]any{
				{"revision": "commit-z", "message": "Remove the flag", "time": 1700000000000, "projKey": w.Project, "flagKey": w.Flag}})
		},
		"getExtinctions": func(w *example.World) example.Call {
			return example.Get("/api/v2/code-refs/extinctions?repoName=" + exampleRepo(w))
		},
	}}
}
