package auditapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/account"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// walkAudit follows next links from href to the end and returns every entry.
func walkAudit(t testing.TB, srv *apptest.Server, href string) []apptest.AuditEntry {
	t.Helper()
	var all []apptest.AuditEntry
	for pages := 0; href != ""; pages++ {
		if pages > 1000 {
			t.Fatalf("the next links do not end")
		}
		page := apptest.AuditPage(t, srv, href)
		all = append(all, page.Items...)
		href = page.Links["next"].Href
	}
	return all
}

func ids(es []apptest.AuditEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// mutations runs the changes every resource kind built so far makes, and
// returns the "action resource" of each, oldest first.
func mutations(t *testing.T, srv *apptest.Server) []string {
	t.Helper()
	steps := []struct {
		method, path string
		body         any
		status       int
		access       string
	}{
		{"POST", apptest.API + "/projects", map[string]any{"key": "p", "name": "P", "environments": []any{}}, 201, "createProject proj/p"},
		{"POST", apptest.EnvsPath("p"), map[string]any{"key": "e", "name": "E", "color": "ffffff"}, 201, "createEnvironment proj/p:env/e"},
		{"PATCH", apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Replace("/name", "E2")}, 200, "updateName proj/p:env/e"},
		{"PATCH", apptest.EnvPath("p", "e"), map[string]any{"comment": "brand colours", "patch": []apptest.PatchOp{apptest.Replace("/color", "000000")}}, 200, "updateColor proj/p:env/e"},
		{"PATCH", apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/name", "P2")}, 200, "updateProjectName proj/p"},
		{"DELETE", apptest.EnvPath("p", "e"), nil, 204, "deleteEnvironment proj/p:env/e"},
		{"DELETE", apptest.ProjectPath("p"), nil, 204, "deleteProject proj/p"},
	}
	var out []string
	for _, s := range steps {
		apptest.WantStatus(t, srv.Do(t, s.method, s.path, s.body), s.status)
		out = append(out, s.access)
		// Apart in time, so dates tell the changes apart.
		time.Sleep(2 * time.Millisecond)
	}
	return out
}

func TestAuditLog(t *testing.T) {
	srv := apptest.New(t)
	made := mutations(t, srv)
	all := walkAudit(t, srv, apptest.API+"/auditlog?limit=20")

	t.Run("every change writes one entry, listed newest first", func(t *testing.T) {
		var got []string
		for _, e := range all {
			if e.Kind != "token" { // the bootstrap admin token
				got = append(got, e.Access())
			}
		}
		want := slices.Clone(made)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("entries\n%v\nwant\n%v", got, want)
		}
	})

	t.Run("the first entry is the bootstrap admin token", func(t *testing.T) {
		last := all[len(all)-1]
		if last.Kind != "token" || last.Access() == "" || !strings.HasPrefix(last.Accesses[0].Resource, "member/*:token/") {
			t.Errorf("oldest entry %+v", last)
		}
	})

	t.Run("dates never increase down the list and ids strictly decrease", func(t *testing.T) {
		for i := 1; i < len(all); i++ {
			if all[i].Millis(t) > all[i-1].Millis(t) {
				t.Errorf("entry %d is newer than entry %d", i, i-1)
			}
			if all[i].ID >= all[i-1].ID {
				t.Errorf("entry id %s does not sort below %s", all[i].ID, all[i-1].ID)
			}
		}
	})

	t.Run("refused changes write no entry", func(t *testing.T) {
		srv.MustCreateProject(t, "q")
		before := len(walkAudit(t, srv, apptest.API+"/auditlog?limit=20"))
		apptest.WantStatus(t, srv.Do(t, "PATCH", apptest.EnvPath("q", "test"), []apptest.PatchOp{apptest.Replace("/color", "nope")}), 400)
		apptest.WantStatus(t, srv.Do(t, "PATCH", apptest.EnvPath("q", "test"), []apptest.PatchOp{{Op: "test", Path: "/name", Value: "x"}}), 422)
		apptest.WantStatus(t, srv.Do(t, "POST", apptest.API+"/projects", map[string]any{"key": "q", "name": "Q"}), 409)
		apptest.WantStatus(t, srv.Do(t, "DELETE", apptest.EnvPath("q", "nope"), nil), 404)
		apptest.WantStatus(t, srv.Do(t, "PATCH", apptest.EnvPath("q", "test"), []apptest.PatchOp{apptest.Replace("/name", "Test")}), 200) // no change
		if after := len(walkAudit(t, srv, apptest.API+"/auditlog?limit=20")); after != before {
			t.Errorf("%d entries, want %d", after, before)
		}
	})
}

func TestAuditLogEntryContent(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	created := srv.MustCreateEnvironment(t, "p", "e", nil)
	sent := `[{"op": "replace", "path": "/name", "value": "Renamed"}, {"op": "add", "path": "/tags/-", "value": "t1"}]`
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), map[string]any{"comment": "audited rename", "patch": json.RawMessage(sent)}), http.StatusOK)
	patched := apptest.GetEnv(t, srv, "p", "e")
	apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.EnvPath("p", "e"), nil), http.StatusNoContent)

	find := func(t *testing.T, action string) apptest.AuditEntry {
		t.Helper()
		for _, e := range walkAudit(t, srv, apptest.API+"/auditlog?limit=20&q=proj/p:env/e") {
			for _, a := range e.Accesses {
				if a.Action == action {
					res := srv.Do(t, http.MethodGet, apptest.AuditEntryPath(e.ID), nil)
					apptest.WantStatus(t, res, http.StatusOK)
					var detailed apptest.AuditEntry
					res.JSON(t, &detailed)
					return detailed
				}
			}
		}
		t.Fatalf("no entry with action %s", action)
		return apptest.AuditEntry{}
	}
	createEntry, patchEntry, deleteEntry := find(t, "createEnvironment"), find(t, "updateName"), find(t, "deleteEnvironment")

	t.Run("an entry names the action, the resource, the kind and the environment", func(t *testing.T) {
		e := createEntry
		if len(e.Accesses) != 1 || e.Accesses[0].Action != "createEnvironment" || e.Accesses[0].Resource != "proj/p:env/e" {
			t.Errorf("accesses %+v", e.Accesses)
		}
		if e.Kind != "environment" || e.Name != "Environment e" {
			t.Errorf("kind %q name %q", e.Kind, e.Name)
		}
		if e.Title != account.DefaultOwnerEmail+" created the environment Environment e" {
			t.Errorf("title %q", e.Title)
		}
		if e.Target != "[Environment e]("+apptest.EnvPath("p", "e")+")" {
			t.Errorf("target %q", e.Target)
		}
		if e.Parent == nil || e.Parent.Resource != "proj/p" {
			t.Errorf("parent %+v", e.Parent)
		}
		if e.AccountID != srv.AccountID {
			t.Errorf("_accountId %q, want %q", e.AccountID, srv.AccountID)
		}
		if e.Links["self"].Href != apptest.AuditEntryPath(e.ID) {
			t.Errorf("self link %q", e.Links["self"].Href)
		}
	})

	t.Run("an entry names the member and the token that made the change, the token by its last four characters", func(t *testing.T) {
		tok := createEntry.Token
		if tok == nil {
			t.Fatalf("no token")
		}
		if tok.Ending != srv.Token[len(srv.Token)-4:] || tok.Name != "bootstrap admin" || tok.ServiceToken || tok.ID == "" {
			t.Errorf("token %+v", tok)
		}
		if createEntry.Member == nil || createEntry.Member.Email != account.DefaultOwnerEmail {
			t.Errorf("member %+v", createEntry.Member)
		}
		if createEntry.Subject.Name != account.DefaultOwnerEmail {
			t.Errorf("subject %q", createEntry.Subject.Name)
		}
		if strings.Contains(string(srv.Do(t, http.MethodGet, apptest.AuditEntryPath(createEntry.ID), nil).Body), srv.Token) {
			t.Errorf("the entry shows the whole token")
		}
	})

	t.Run("the entry of a create has no previous version, the environment as current version and a null delta", func(t *testing.T) {
		e := createEntry
		if string(e.PreviousVersion) != "null" || string(e.Delta) != "null" {
			t.Errorf("previousVersion %s delta %s, want null", e.PreviousVersion, e.Delta)
		}
		var cur map[string]any
		if err := json.Unmarshal(e.CurrentVersion, &cur); err != nil || cur["key"] != "e" || cur["_id"] != created["_id"] {
			t.Errorf("currentVersion %s", e.CurrentVersion)
		}
	})

	t.Run("the entry of a patch has both versions, the patch sent as delta and the comment", func(t *testing.T) {
		e := patchEntry
		if !apptest.SameJSON(t, e.Delta, []byte(sent)) {
			t.Errorf("delta %s, want %s", e.Delta, sent)
		}
		if e.Comment != "audited rename" {
			t.Errorf("comment %q", e.Comment)
		}
		var prev, cur map[string]any
		_ = json.Unmarshal(e.PreviousVersion, &prev)
		_ = json.Unmarshal(e.CurrentVersion, &cur)
		if prev["name"] != "Environment e" || cur["name"] != "Renamed" {
			t.Errorf("previous name %v, current name %v", prev["name"], cur["name"])
		}
		if !reflect.DeepEqual(cur["tags"], patched["tags"]) {
			t.Errorf("current tags %v, want %v", cur["tags"], patched["tags"])
		}
		var actions []string
		for _, a := range e.Accesses {
			actions = append(actions, a.Action)
		}
		if !slices.Equal(actions, []string{"updateName", "updateTags"}) {
			t.Errorf("actions %v", actions)
		}
	})

	t.Run("the entry of a delete has the environment as previous version and no current version", func(t *testing.T) {
		e := deleteEntry
		var prev map[string]any
		if err := json.Unmarshal(e.PreviousVersion, &prev); err != nil || prev["name"] != "Renamed" {
			t.Errorf("previousVersion %s", e.PreviousVersion)
		}
		if string(e.CurrentVersion) != "null" || string(e.Delta) != "null" {
			t.Errorf("currentVersion %s delta %s", e.CurrentVersion, e.Delta)
		}
	})

	t.Run("the list shows the summary form without versions or delta", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.API+"/auditlog", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		for _, item := range res.Map(t)["items"].([]any) {
			for _, f := range []string{"previousVersion", "currentVersion", "delta"} {
				if _, ok := item.(map[string]any)[f]; ok {
					t.Errorf("summary entry shows %s", f)
				}
			}
		}
	})

	t.Run("the entry of a token creation does not show the token's hash", func(t *testing.T) {
		var tokenEntry apptest.AuditEntry
		for _, e := range walkAudit(t, srv, apptest.API+"/auditlog?limit=20&q=createAccessToken") {
			tokenEntry = e
		}
		res := srv.Do(t, http.MethodGet, apptest.AuditEntryPath(tokenEntry.ID), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var detailed apptest.AuditEntry
		res.JSON(t, &detailed)
		var cur map[string]any
		if err := json.Unmarshal(detailed.CurrentVersion, &cur); err != nil || cur["name"] != "bootstrap admin" {
			t.Fatalf("currentVersion %s", detailed.CurrentVersion)
		}
		if h, ok := cur["hash"]; ok {
			t.Errorf("currentVersion shows the token hash %v", h)
		}
	})

	t.Run("an unknown id is not found", func(t *testing.T) {
		for _, id := range []string{"000000000000000000000000", "not-an-id", strings.ToUpper(createEntry.ID)} {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.AuditEntryPath(id), nil), http.StatusNotFound, "not_found")
		}
	})
}

func TestAuditLogPaging(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	srv.MustCreateEnvironment(t, "p", "e", nil)
	for i := range 22 {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Replace("/name", fmt.Sprintf("Name %d", i))}), http.StatusOK)
		if i%5 == 0 {
			time.Sleep(3 * time.Millisecond)
		}
	}
	all := walkAudit(t, srv, apptest.API+"/auditlog?limit=20")
	const total = 1 + 1 + 1 + 22 // token, project, environment, patches
	if len(all) != total {
		t.Fatalf("%d entries, want %d", len(all), total)
	}

	t.Run("a list without limit answers 10 entries and a next link", func(t *testing.T) {
		page := apptest.AuditPage(t, srv, apptest.API+"/auditlog")
		if len(page.Items) != 10 {
			t.Errorf("%d items", len(page.Items))
		}
		if !slices.Equal(ids(page.Items), ids(all[:10])) {
			t.Errorf("the first page is not the 10 newest entries")
		}
		if page.Links["next"].Href == "" {
			t.Errorf("no next link")
		}
	})

	for _, limit := range []int{1, 3, 7, 20} {
		t.Run(fmt.Sprintf("following next links with limit %d walks every entry once, in order", limit), func(t *testing.T) {
			got := walkAudit(t, srv, fmt.Sprintf("%s/auditlog?limit=%d", apptest.API, limit))
			if !slices.Equal(ids(got), ids(all)) {
				t.Errorf("walked %d entries, want the %d of one walk", len(got), len(all))
			}
		})
	}

	t.Run("a page that ends the log has no next link", func(t *testing.T) {
		page := apptest.AuditPage(t, srv, fmt.Sprintf("%s/auditlog?limit=%d&q=createProject", apptest.API, 5))
		if len(page.Items) != 1 || page.Links["next"].Href != "" {
			t.Errorf("%d items, next %q", len(page.Items), page.Links["next"].Href)
		}
	})

	for _, q := range []string{"limit=0", "limit=21", "limit=x", "before=x", "after=-1", "cursor=nonsense"} {
		t.Run("the query "+q+" is refused", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/auditlog?"+q, nil), http.StatusBadRequest, "invalid_request")
		})
	}

	// A date with entries both before and after it.
	mid := all[len(all)/2].Millis(t)
	var older, newer, at []string
	for _, e := range all {
		switch d := e.Millis(t); {
		case d < mid:
			older = append(older, e.ID)
		case d > mid:
			newer = append(newer, e.ID)
		default:
			at = append(at, e.ID)
		}
	}
	if len(older) == 0 || len(newer) == 0 {
		t.Fatalf("entries are not spread in time: %d older, %d newer", len(older), len(newer))
	}

	t.Run("before keeps the entries made before the date", func(t *testing.T) {
		if got := ids(walkAudit(t, srv, fmt.Sprintf("%s/auditlog?limit=4&before=%d", apptest.API, mid))); !slices.Equal(got, older) {
			t.Errorf("got %d entries, want %d", len(got), len(older))
		}
	})

	t.Run("after keeps the entries made after the date", func(t *testing.T) {
		if got := ids(walkAudit(t, srv, fmt.Sprintf("%s/auditlog?limit=4&after=%d", apptest.API, mid))); !slices.Equal(got, newer) {
			t.Errorf("got %d entries, want %d", len(got), len(newer))
		}
	})

	t.Run("before and after together keep the entries between", func(t *testing.T) {
		got := ids(walkAudit(t, srv, fmt.Sprintf("%s/auditlog?limit=20&after=%d&before=%d", apptest.API, mid-1, mid+1)))
		if !slices.Equal(got, at) {
			t.Errorf("got %v, want %v", got, at)
		}
	})

	t.Run("q keeps the entries whose text matches, case-insensitively", func(t *testing.T) {
		got := walkAudit(t, srv, apptest.API+"/auditlog?limit=2&q=CREATEENVIRONMENT")
		if len(got) != 1 || got[0].Access() != "createEnvironment proj/p:env/e" {
			t.Errorf("got %v", ids(got))
		}
		if got := walkAudit(t, srv, apptest.API+"/auditlog?limit=5&q=proj/p:env/e"); len(got) != 23 {
			t.Errorf("%d entries of the environment, want 23", len(got))
		}
		if got := walkAudit(t, srv, apptest.API+"/auditlog?q=Name%2017"); len(got) != 1 {
			t.Errorf("%d entries named Name 17, want 1", len(got))
		}
		if got := walkAudit(t, srv, apptest.API+"/auditlog?q=nothing-matches"); len(got) != 0 {
			t.Errorf("%d entries", len(got))
		}
	})

	t.Run("the next link keeps q, limit and the bounds", func(t *testing.T) {
		page := apptest.AuditPage(t, srv, fmt.Sprintf("%s/auditlog?limit=2&q=update&before=%d", apptest.API, all[0].Millis(t)+1))
		q := apptest.Query(t, page.Links["next"].Href)
		if q.Get("q") != "update" || q.Get("limit") != "2" || q.Get("before") == "" {
			t.Errorf("next %q", page.Links["next"].Href)
		}
	})
}
