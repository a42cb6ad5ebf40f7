package coderefsapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

const repos = "/api/v2/code-refs/repositories"

func wantStatus(tb testing.TB, res *apptest.Response, status int, parts ...string) {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	for _, p := range parts {
		if !strings.Contains(string(res.Body), p) {
			tb.Errorf("answer %s does not mention %q", res.Body, p)
		}
	}
}

func branchBody(name, head string, seq int64, flags ...string) map[string]any {
	var hunks []any
	for i, f := range flags {
		hunks = append(hunks, map[string]any{"startingLineNumber": i + 1, "lines": f, "projKey": "p", "flagKey": f})
	}
	refs := []any{}
	if len(hunks) > 0 {
		refs = append(refs, map[string]any{"path": "main.go", "hunks": hunks})
	}
	body := map[string]any{"name": name, "head": head, "syncTime": 1700000000000, "references": refs}
	if seq > 0 {
		body["updateSequenceId"] = seq
	}
	return body
}

func TestRepositoriesThroughHTTP(t *testing.T) {
	srv := apptest.New(t)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "Web-App"}), http.StatusOK, `"type":"custom"`, `"defaultBranch":"main"`, `"enabled":true`, `"_access"`)
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		parts  []string
	}{
		{"a second repository of the same name in another case is a conflict", http.MethodPost, repos, map[string]any{"name": "web-app"}, http.StatusConflict, []string{"already exists"}},
		{"a name with a slash is refused, naming the rule", http.MethodPost, repos, map[string]any{"name": "a/b"}, http.StatusBadRequest, []string{"letters, digits"}},
		{"a type outside the reference's list is refused", http.MethodPost, repos, map[string]any{"name": "x", "type": "svn"}, http.StatusBadRequest, []string{"bitbucket, custom, github, gitlab"}},
		{"a repository is read in any case", http.MethodGet, repos + "/WEB-APP", nil, http.StatusOK, []string{`"name":"Web-App"`}},
		{"an unknown repository is a 404", http.MethodGet, repos + "/nope", nil, http.StatusNotFound, []string{"nope"}},
		{"a merge patch, as ld-find-code-refs sends, edits fields", http.MethodPatch, repos + "/web-app", map[string]any{"sourceLink": "https://git.example.com/web"}, http.StatusOK, []string{`"sourceLink":"https://git.example.com/web"`, `"version":2`}},
		{"a JSON patch edits fields", http.MethodPatch, repos + "/web-app", []map[string]any{{"op": "replace", "path": "/enabled", "value": false}}, http.StatusOK, []string{`"enabled":false`}},
		{"a disabled repository takes no upload", http.MethodPut, repos + "/web-app/branches/main", branchBody("main", "c1", 0), http.StatusBadRequest, []string{"disabled"}},
		{"a patch of a read-only field is refused", http.MethodPatch, repos + "/web-app", []map[string]any{{"op": "replace", "path": "/version", "value": 9}}, http.StatusBadRequest, []string{"version"}},
		{"extinctions with from but no to are refused", http.MethodGet, "/api/v2/code-refs/extinctions?from=1", nil, http.StatusBadRequest, []string{"from", "to"}},
		{"extinctions with a from that is no number are refused", http.MethodGet, "/api/v2/code-refs/extinctions?from=x&to=2", nil, http.StatusBadRequest, []string{"from"}},
		{"extinctions of an unknown repository are a 404", http.MethodGet, "/api/v2/code-refs/extinctions?repoName=nope", nil, http.StatusNotFound, nil},
		{"branch-delete tasks of an unknown repository are a 404", http.MethodPost, repos + "/nope/branch-delete-tasks", []string{"main"}, http.StatusNotFound, nil},
		{"a repository is deleted", http.MethodDelete, repos + "/web-app", nil, http.StatusNoContent, nil},
		{"and is gone", http.MethodGet, repos + "/web-app", nil, http.StatusNotFound, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, srv.Do(t, tc.method, tc.path, tc.body), tc.status, tc.parts...)
		})
	}
}

func TestUploadsThroughHTTP(t *testing.T) {
	srv := apptest.New(t)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "svc", "defaultBranch": "trunk"}), http.StatusOK)
	put := func(body map[string]any) *apptest.Response {
		return srv.Do(t, http.MethodPut, repos+"/svc/branches/trunk", body)
	}
	wantStatus(t, put(branchBody("trunk", "c1", 10, "alpha", "beta")), http.StatusOK)
	t.Run("an older updateSequenceId is the 409 whose code ld-find-code-refs reads as a warning", func(t *testing.T) {
		wantStatus(t, put(branchBody("trunk", "c0", 9)), http.StatusConflict, `"code":"updateSequenceId_conflict"`)
	})
	wantStatus(t, put(branchBody("trunk", "c2", 11, "alpha")), http.StatusOK)
	t.Run("the default branch's extinctions are listed by repository", func(t *testing.T) {
		var ext struct {
			Items map[string][]map[string]any `json:"items"`
		}
		srv.Do(t, http.MethodGet, "/api/v2/code-refs/extinctions", nil).JSON(t, &ext)
		if len(ext.Items["svc"]) != 1 || ext.Items["svc"][0]["flagKey"] != "beta" || ext.Items["svc"][0]["revision"] != "c2" {
			t.Errorf("extinctions %v, want beta at c2 under svc", ext.Items)
		}
	})
	t.Run("a branch read filters hunks by flag", func(t *testing.T) {
		wantStatus(t, srv.Do(t, http.MethodGet, repos+"/svc/branches/trunk?flagKey=beta", nil), http.StatusOK, `"references":[]`)
		wantStatus(t, srv.Do(t, http.MethodGet, repos+"/svc/branches/trunk?flagKey=alpha", nil), http.StatusOK, `"flagKey":"alpha"`)
	})
	t.Run("repositories list branches, and the default branch's references when asked", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, repos+"?withBranches", nil)
		wantStatus(t, res, http.StatusOK, `"name":"trunk"`)
		if strings.Contains(string(res.Body), `"references"`) {
			t.Errorf("withBranches alone shows references: %s", res.Body)
		}
		wantStatus(t, srv.Do(t, http.MethodGet, repos+"?withReferencesForDefaultBranch=1", nil), http.StatusOK, `"flagKey":"alpha"`)
	})
	t.Run("an upload's audit entry names the branch but holds no code", func(t *testing.T) {
		var list struct {
			Items []struct {
				ID    string `json:"_id"`
				Title string `json:"title"`
			} `json:"items"`
		}
		srv.Do(t, http.MethodGet, "/api/v2/auditlog?q=trunk", nil).JSON(t, &list)
		if len(list.Items) == 0 || !strings.Contains(list.Items[0].Title, `uploaded code references of branch "trunk"`) {
			t.Fatalf("audit entries %+v, want the upload", list.Items)
		}
		res := srv.Do(t, http.MethodGet, "/api/v2/auditlog/"+list.Items[0].ID, nil)
		var entry struct {
			Current json.RawMessage `json:"currentVersion"`
		}
		res.JSON(t, &entry)
		if !strings.Contains(string(entry.Current), `"head":"c2"`) || strings.Contains(string(entry.Current), "references") {
			t.Errorf("the entry's current version %s: want the head and no references", entry.Current)
		}
	})
	t.Run("an upload naming another branch than its path is refused", func(t *testing.T) {
		wantStatus(t, put(branchBody("main", "c3", 12)), http.StatusBadRequest, "path names branch")
	})
	t.Run("an extinction without a flag key is refused, naming the field", func(t *testing.T) {
		wantStatus(t, srv.Do(t, http.MethodPost, repos+"/svc/branches/trunk/extinction-events", []map[string]any{{"revision": "r", "message": "m", "time": 1, "projKey": "p"}}),
			http.StatusBadRequest, "[0].flagKey")
	})
}

func TestCodeRefsRights(t *testing.T) {
	srv := apptest.New(t)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "mine"}), http.StatusOK)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "theirs"}), http.StatusOK)
	_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
	_, noAccess := srv.MustCreateToken(t, map[string]any{"name": "nothing", "role": "no_access"})
	// A scanner's token: uploads to one repository, no other change.
	_, scanner := srv.MustCreateToken(t, map[string]any{"name": "scanner", "inlineRole": []map[string]any{
		{"effect": "allow", "resources": []string{"code-reference-repository/mine"}, "actions": []string{"updateCodeRefsRepositoryBranches", "updateCodeRefsRepositoryConfiguration", "viewProject"}},
		{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}},
	}})
	cases := []struct {
		name   string
		token  string
		method string
		path   string
		body   any
		status int
	}{
		{"a reader lists repositories", reader, http.MethodGet, repos, nil, http.StatusOK},
		{"a reader may not create one", reader, http.MethodPost, repos, map[string]any{"name": "r"}, http.StatusForbidden},
		{"without rights, a patch of test operations only is refused too (it would read the repository)", noAccess, http.MethodPatch, repos + "/mine",
			[]map[string]any{{"op": "test", "path": "/name", "value": "mine"}}, http.StatusForbidden},
		{"without rights, a repository cannot be read", noAccess, http.MethodGet, repos + "/mine", nil, http.StatusForbidden},
		{"the scanner reads its repository's extinctions", scanner, http.MethodGet, "/api/v2/code-refs/extinctions?repoName=mine", nil, http.StatusOK},
		{"the scanner may not read another's", scanner, http.MethodGet, "/api/v2/code-refs/extinctions?repoName=theirs", nil, http.StatusForbidden},
		{"the scanner may not list every repository's extinctions", scanner, http.MethodGet, "/api/v2/code-refs/extinctions", nil, http.StatusForbidden},
		{"a reader may not upload", reader, http.MethodPut, repos + "/mine/branches/main", branchBody("main", "c1", 0), http.StatusForbidden},
		{"the scanner uploads to its repository", scanner, http.MethodPut, repos + "/mine/branches/main", branchBody("main", "c1", 0, "alpha"), http.StatusOK},
		{"the scanner's merge patch of its repository's configuration passes", scanner, http.MethodPatch, repos + "/mine", map[string]any{"defaultBranch": "main"}, http.StatusOK},
		{"the scanner may not turn its repository off", scanner, http.MethodPatch, repos + "/mine", map[string]any{"enabled": false}, http.StatusForbidden},
		{"the scanner may not upload to another repository", scanner, http.MethodPut, repos + "/theirs/branches/main", branchBody("main", "c1", 0), http.StatusForbidden},
		{"the scanner may not create a repository", scanner, http.MethodPost, repos, map[string]any{"name": "new"}, http.StatusForbidden},
		{"the scanner may not delete its repository", scanner, http.MethodDelete, repos + "/mine", nil, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, srv.Do(t, tc.method, tc.path, tc.body, "Authorization", tc.token), tc.status)
		})
	}
}

func TestRightsAreDecidedOnTheStoredName(t *testing.T) {
	srv := apptest.New(t)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "Secret"}), http.StatusOK)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "open"}), http.StatusOK)
	_, token := srv.MustCreateToken(t, map[string]any{"name": "all but one", "inlineRole": []map[string]any{
		{"effect": "allow", "resources": []string{"code-reference-repository/*"}, "actions": []string{"*"}},
		{"effect": "deny", "resources": []string{"code-reference-repository/Secret"}, "actions": []string{"*"}},
	}})
	// Names are case-insensitive: every spelling of the denied one is denied.
	for _, name := range []string{"Secret", "secret", "SECRET"} {
		cases := []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, repos + "/" + name, nil},
			{http.MethodPatch, repos + "/" + name, map[string]any{"defaultBranch": "x"}},
			{http.MethodPatch, repos + "/" + name, []map[string]any{{"op": "test", "path": "/name", "value": "Secret"}}},
			{http.MethodDelete, repos + "/" + name, nil},
			{http.MethodGet, repos + "/" + name + "/branches", nil},
			{http.MethodPut, repos + "/" + name + "/branches/main", branchBody("main", "c1", 0)},
			{http.MethodPost, repos + "/" + name + "/branch-delete-tasks", []string{"main"}},
			{http.MethodGet, "/api/v2/code-refs/extinctions?repoName=" + name, nil},
		}
		for _, tc := range cases {
			t.Run(tc.method+" "+tc.path+" is refused", func(t *testing.T) {
				wantStatus(t, srv.Do(t, tc.method, tc.path, tc.body, "Authorization", token), http.StatusForbidden)
			})
		}
	}
	t.Run("lists leave out the denied repository", func(t *testing.T) {
		for _, refs := range [][]string{{"alpha"}, nil} {
			for _, repo := range []string{"Secret", "open"} {
				wantStatus(t, srv.Do(t, http.MethodPut, repos+"/"+repo+"/branches/main", branchBody("main", "h"+strings.Join(refs, ""), 0, refs...)), http.StatusOK)
			}
		}
		var list struct {
			Items []struct{ Name string } `json:"items"`
		}
		srv.Do(t, http.MethodGet, repos, nil, "Authorization", token).JSON(t, &list)
		if len(list.Items) != 1 || list.Items[0].Name != "open" {
			t.Errorf("repositories listed: %+v, want only open", list.Items)
		}
		var ext struct {
			Items map[string]any `json:"items"`
		}
		srv.Do(t, http.MethodGet, "/api/v2/code-refs/extinctions", nil, "Authorization", token).JSON(t, &ext)
		if len(ext.Items) != 1 || ext.Items["open"] == nil {
			t.Errorf("extinctions listed for %v, want only open", ext.Items)
		}
	})
	t.Run("another repository in another case is allowed", func(t *testing.T) {
		wantStatus(t, srv.Do(t, http.MethodPut, repos+"/OPEN/branches/main", branchBody("main", "c1", 0), "Authorization", token), http.StatusOK)
	})
}
