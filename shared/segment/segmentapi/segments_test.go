package segmentapi_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// segDoc is a segment as the API answers it.
type segDoc struct {
	Links            map[string]struct{ Href, Type string } `json:"_links"`
	Key              string                                 `json:"key"`
	Name             string                                 `json:"name"`
	Description      string                                 `json:"description"`
	Tags             []string                               `json:"tags"`
	CreationDate     int64                                  `json:"creationDate"`
	LastModifiedDate int64                                  `json:"lastModifiedDate"`
	Included         []string                               `json:"included"`
	Excluded         []string                               `json:"excluded"`
	IncludedContexts []any                                  `json:"includedContexts"`
	ExcludedContexts []any                                  `json:"excludedContexts"`
	Rules            []map[string]any                       `json:"rules"`
	Version          int                                    `json:"version"`
	Generation       int                                    `json:"generation"`
	Unbounded        bool                                   `json:"unbounded"`
	UnboundedKind    string                                 `json:"unboundedContextKind"`
	Metadata         *struct {
		EnvID, SegmentID string
		Version          int
	} `json:"_unboundedMetadata"`
	Flags *[]struct {
		Key, Name string
		Links     map[string]struct{ Href string } `json:"_links"`
	} `json:"_flags"`
	Access *struct {
		Allowed []struct{ Action string } `json:"allowed"`
	} `json:"_access"`
}

func segsPath(p, e string) string   { return segment.CollectionHref(p, e) }
func segPath(p, e, k string) string { return segment.Href(p, e, k) }

// decodeSeg reads a segment answer of status.
func decodeSeg(tb testing.TB, res *apptest.Response, status int) segDoc {
	tb.Helper()
	apptest.WantStatus(tb, res, status)
	var d segDoc
	res.JSON(tb, &d)
	return d
}

// createSeg creates a segment of p's environment e from body.
func createSeg(tb testing.TB, srv *apptest.Server, p, e string, body map[string]any) segDoc {
	tb.Helper()
	return decodeSeg(tb, srv.Do(tb, http.MethodPost, segsPath(p, e), body), http.StatusCreated)
}

// useSegment adds a production rule matching segment seg to flag f.
func useSegment(tb testing.TB, srv *apptest.Server, p, f, seg string) {
	tb.Helper()
	apptest.WantStatus(tb, srv.Do(tb, http.MethodPatch, apptest.FlagPath(p, f), []apptest.PatchOp{apptest.Add("/environments/production/rules/-",
		map[string]any{"variation": 0, "clauses": []map[string]any{{"attribute": "segmentMatch", "op": "segmentMatch", "values": []string{seg}}}})}), http.StatusOK)
}

func TestSegmentCreateReadPatchDelete(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")

	var created segDoc
	t.Run("a segment is created with 201 and every field of the reference", func(t *testing.T) {
		created = createSeg(t, srv, "p", "production", map[string]any{"key": "beta", "name": "Beta", "description": "early", "tags": []string{"vip"}})
		if created.Key != "beta" || created.Name != "Beta" || created.Description != "early" || !slices.Equal(created.Tags, []string{"vip"}) ||
			created.Version != 1 || created.Generation != 1 || created.CreationDate == 0 || created.LastModifiedDate != created.CreationDate ||
			created.Unbounded || created.Metadata != nil || created.Flags != nil {
			t.Errorf("created %+v", created)
		}
		if created.Included == nil || created.Excluded == nil || created.IncludedContexts == nil || created.ExcludedContexts == nil || created.Rules == nil {
			t.Errorf("a list is null, want []: %+v", created)
		}
		if created.Links["self"].Href != "/api/v2/segments/p/production/beta" || created.Links["parent"].Href != "/api/v2/segments/p/production" ||
			created.Links["site"].Type != "text/html" {
			t.Errorf("links %+v", created.Links)
		}
		if created.Access == nil || !slices.ContainsFunc(created.Access.Allowed, func(a struct{ Action string }) bool { return a.Action == "deleteSegment" }) {
			t.Errorf("_access %+v, want deleteSegment allowed for the admin", created.Access)
		}
	})
	t.Run("a big segment shows its metadata with the environment's id and its membership set", func(t *testing.T) {
		big := createSeg(t, srv, "p", "production", map[string]any{"key": "big", "name": "Big", "unbounded": true})
		env := apptest.GetEnv(t, srv, "p", "production")
		if !big.Unbounded || big.UnboundedKind != "user" || big.Metadata == nil || big.Metadata.EnvID != env["_id"] || big.Metadata.SegmentID != "big.g1" {
			t.Errorf("big %+v (metadata %+v), environment id %v", big, big.Metadata, env["_id"])
		}
	})

	refusals := []struct {
		name         string
		method, path string
		body         any
		status       int
		parts        []string
	}{
		{"a taken key is refused with 409 naming it", http.MethodPost, segsPath("p", "production"), map[string]any{"key": "beta", "name": "Again"},
			http.StatusConflict, []string{`segment "beta" already exists`}},
		{"a create without a name is refused naming name", http.MethodPost, segsPath("p", "production"), map[string]any{"key": "noname"},
			http.StatusBadRequest, []string{`"name"`}},
		{"a create without a key is refused naming key", http.MethodPost, segsPath("p", "production"), map[string]any{"name": "No key"},
			http.StatusBadRequest, []string{`"key"`}},
		{"a create with a tag of the wrong type is refused naming tags", http.MethodPost, segsPath("p", "production"), map[string]any{"key": "k", "name": "K", "tags": "vip"},
			http.StatusBadRequest, []string{"tags"}},
		{"a create in a missing environment is a 404 naming it", http.MethodPost, segsPath("p", "staging"), map[string]any{"key": "k", "name": "K"},
			http.StatusNotFound, []string{`environment "staging"`}},
		{"a create in a missing project is a 404 naming it", http.MethodPost, segsPath("nope", "production"), map[string]any{"key": "k", "name": "K"},
			http.StatusNotFound, []string{`project "nope"`}},
		{"a read of a missing segment is a 404 naming it", http.MethodGet, segPath("p", "production", "ghost"), nil,
			http.StatusNotFound, []string{`segment "ghost"`, `environment "production"`}},
		{"a read in a missing environment is a 404 naming the environment", http.MethodGet, segPath("p", "staging", "beta"), nil,
			http.StatusNotFound, []string{`environment "staging" not found`}},
		{"a list of a missing environment is a 404 naming it", http.MethodGet, segsPath("p", "staging"), nil,
			http.StatusNotFound, []string{`environment "staging" not found`}},
		{"a patch of a missing environment is a 404 naming it", http.MethodPatch, segPath("p", "staging", "beta"), []apptest.PatchOp{apptest.Replace("/name", "x")},
			http.StatusNotFound, []string{`environment "staging" not found`}},
		{"a delete of a missing segment is a 404 naming it", http.MethodDelete, segPath("p", "production", "ghost"), nil,
			http.StatusNotFound, []string{`segment "ghost"`}},
		{"a patch of a read-only field is refused naming it", http.MethodPatch, segPath("p", "production", "beta"), []apptest.PatchOp{apptest.Replace("/key", "other")},
			http.StatusBadRequest, []string{`"/key"`}},
		{"a patch listing a key both included and excluded is refused", http.MethodPatch, segPath("p", "production", "beta"),
			[]apptest.PatchOp{apptest.Add("/included/-", "u1"), apptest.Add("/excluded/-", "u1")}, http.StatusBadRequest, []string{`"u1"`, "both included and excluded"}},
		{"a failed test operation changes nothing", http.MethodPatch, segPath("p", "production", "beta"),
			[]apptest.PatchOp{{Op: "test", Path: "/version", Value: 7}, apptest.Replace("/name", "Stale")}, http.StatusUnprocessableEntity, []string{"/version"}},
		{"instructions sent as plain JSON are refused with the Content-Type to use", http.MethodPatch, segPath("p", "production", "beta"),
			map[string]any{"instructions": []map[string]any{{"kind": "updateName", "value": "x"}}}, http.StatusBadRequest, []string{"domain-model="}},
		{"a dry run is refused rather than applied", http.MethodPatch, segPath("p", "production", "beta") + "?dryRun=true",
			[]apptest.PatchOp{apptest.Replace("/name", "Dry")}, http.StatusBadRequest, []string{"dryRun"}},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			before := srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil).Body
			code := map[int]string{http.StatusBadRequest: "invalid_request", http.StatusNotFound: "not_found",
				http.StatusConflict: "conflict", http.StatusUnprocessableEntity: "patch_failed"}[c.status]
			apptest.WantError(t, srv.Do(t, c.method, c.path, c.body), c.status, code, c.parts...)
			if after := srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil).Body; !apptest.SameJSON(t, before, after) {
				t.Errorf("the refused request changed the segment:\n%s\n%s", before, after)
			}
		})
	}

	t.Run("a semantic patch naming another environment than the path's is refused naming environmentKey", func(t *testing.T) {
		body := map[string]any{"environmentKey": "test", "instructions": []map[string]any{apptest.Instr("updateName", "value", "Elsewhere")}}
		apptest.WantError(t, srv.Do(t, http.MethodPatch, segPath("p", "production", "beta"), body, "Content-Type", apptest.SemanticType),
			http.StatusBadRequest, "invalid_request", `"environmentKey"`, `"test"`, `"production"`)
		if d := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK); d.Name != "Beta" {
			t.Errorf("name %q after the refused patch", d.Name)
		}
	})
	t.Run("a JSON patch with a passing test changes the fields and the version", func(t *testing.T) {
		d := decodeSeg(t, srv.Do(t, http.MethodPatch, segPath("p", "production", "beta"), map[string]any{"comment": "add u1", "patch": []apptest.PatchOp{
			{Op: "test", Path: "/version", Value: 1}, apptest.Replace("/name", "Beta testers"), apptest.Add("/included/-", "u1"),
			apptest.Add("/includedContexts/-", map[string]any{"contextKind": "org", "values": []string{"acme"}}),
			apptest.Add("/rules/-", map[string]any{"_id": "r1", "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@acme.com"}}}}),
		}}), http.StatusOK)
		if d.Name != "Beta testers" || !slices.Equal(d.Included, []string{"u1"}) || len(d.IncludedContexts) != 1 || len(d.Rules) != 1 ||
			d.Version != 2 || d.LastModifiedDate < created.LastModifiedDate || d.CreationDate != created.CreationDate {
			t.Errorf("patched %+v", d)
		}
		if e := apptest.LatestAuditEntry(t, srv); e.Kind != "segment" || e.Comment != "add u1" {
			t.Errorf("audit entry %+v", e)
		}
	})
	t.Run("an unused segment's read shows no flags", func(t *testing.T) {
		d := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
		if d.Flags == nil || len(*d.Flags) != 0 {
			t.Errorf("_flags %+v, want []", d.Flags)
		}
	})
	t.Run("a segment a flag uses names the flag in _flags and cannot be deleted", func(t *testing.T) {
		useSegment(t, srv, "p", "f", "beta")
		d := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
		if d.Flags == nil || len(*d.Flags) != 1 || (*d.Flags)[0].Key != "f" || (*d.Flags)[0].Links["self"].Href != "/api/v2/flags/p/f" {
			t.Errorf("_flags %+v", d.Flags)
		}
		apptest.WantError(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "beta"), nil), http.StatusConflict, "conflict", `flag "f"`)
		decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
	})
	t.Run("a segment another segment's rule matches cannot be deleted, and the 409 names that segment", func(t *testing.T) {
		createSeg(t, srv, "p", "production", map[string]any{"key": "inner", "name": "Inner"})
		createSeg(t, srv, "p", "production", map[string]any{"key": "outer", "name": "Outer"})
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, segPath("p", "production", "outer"), []apptest.PatchOp{apptest.Add("/rules/-",
			map[string]any{"_id": "nested", "clauses": []map[string]any{{"attribute": "segmentMatch", "op": "segmentMatch", "values": []string{"inner"}}}})}), http.StatusOK)
		apptest.WantError(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "inner"), nil), http.StatusConflict, "conflict", `segment "outer"`)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "outer"), nil), http.StatusNoContent)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "inner"), nil), http.StatusNoContent)
	})
	t.Run("the list shows no _flags", func(t *testing.T) {
		if strings.Contains(srv.Do(t, http.MethodGet, segsPath("p", "production"), nil).String(), "_flags") {
			t.Error("the list carries _flags")
		}
	})
	t.Run("once no flag uses it the segment is deleted with 204 and is gone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{{Op: "remove", Path: "/environments/production/rules/0"}}), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "beta"), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusNotFound, "not_found", `segment "beta"`)
	})
	t.Run("a segment created again after its delete starts a new generation", func(t *testing.T) {
		d := createSeg(t, srv, "p", "production", map[string]any{"key": "beta", "name": "Beta again"})
		if d.Generation != 2 || d.Version != 1 || len(d.Included) != 0 {
			t.Errorf("recreated %+v", d)
		}
	})
}

func TestSegmentList(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	for _, s := range []map[string]any{
		{"key": "alpha", "name": "Zeta testers", "tags": []string{"beta"}},
		{"key": "bravo", "name": "Yankee", "tags": []string{"vip"}, "description": "the toggle crowd"},
		{"key": "charlie", "name": "X-ray", "unbounded": true},
		{"key": "delta", "name": "whiskey", "tags": []string{"vip", "beta"}},
	} {
		createSeg(t, srv, "p", "production", s)
	}
	createSeg(t, srv, "p", "test", map[string]any{"key": "elsewhere", "name": "In test"})
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, segPath("p", "production", "alpha"), []apptest.PatchOp{apptest.Replace("/description", "touched")}), http.StatusOK)

	list := func(tb testing.TB, query string) ([]string, map[string]any) {
		tb.Helper()
		res := srv.Do(tb, http.MethodGet, segsPath("p", "production")+query, nil)
		apptest.WantStatus(tb, res, http.StatusOK)
		return apptest.ItemKeys(tb, res), res.Map(tb)
	}
	filter := func(f string) string { return "?filter=" + url.QueryEscape(f) }
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"without a filter every segment of the environment shows, by key", "", []string{"alpha", "bravo", "charlie", "delta"}},
		{"tags anyOf keeps segments holding any of the tags", filter(`tags anyOf ["vip"]`), []string{"bravo", "delta"}},
		{"query equals searches key, name and description, ignoring case", filter(`query equals "TOGGLE"`), []string{"bravo"}},
		{"query equals matches the key", filter(`query equals "char"`), []string{"charlie"}},
		{"a list of queries matches any of them", filter(`query equals ["zeta", "whiskey"]`), []string{"alpha", "delta"}},
		{"unbounded equals true keeps big segments", filter(`unbounded equals true`), []string{"charlie"}},
		{"unbounded equals false keeps the others", filter(`unbounded equals false`), []string{"alpha", "bravo", "delta"}},
		{"includedKeys anyOf keeps the named segments", filter(`includedKeys anyOf ["alpha","delta","nope"]`), []string{"alpha", "delta"}},
		{"excludedKeys anyOf leaves the named segments out", filter(`excludedKeys anyOf ["alpha","delta"]`), []string{"bravo", "charlie"}},
		{"external exists true keeps none, as no segment is synced", filter(`external exists true`), nil},
		{"external exists false keeps all", filter(`external exists false`), []string{"alpha", "bravo", "charlie", "delta"}},
		{"the reference's example combines tags and query with and", filter(`tags anyOf ["vip","beta"],query equals "whis"`), []string{"delta"}},
		{"a bar combines with or", filter(`unbounded equals true|tags anyOf ["beta"]`), []string{"alpha", "charlie", "delta"}},
		{"sort by name ignores case", "?sort=name", []string{"delta", "charlie", "bravo", "alpha"}},
		{"sort by -key descends", "?sort=-key", []string{"delta", "charlie", "bravo", "alpha"}},
		{"sort by creationDate keeps creation order", "?sort=creationDate", []string{"alpha", "bravo", "charlie", "delta"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, doc := list(t, c.query)
			if !slices.Equal(got, c.want) {
				t.Errorf("keys %v, want %v", got, c.want)
			}
			if total := doc["totalCount"]; total != float64(len(c.want)) {
				t.Errorf("totalCount %v, want %d", total, len(c.want))
			}
		})
	}
	t.Run("sort by -lastModified puts the last patched first", func(t *testing.T) {
		if got, _ := list(t, "?sort=-lastModified"); len(got) != 4 || got[0] != "alpha" {
			t.Errorf("keys %v, want alpha first", got)
		}
	})
	t.Run("a page shows its window, the total, and links that keep the filter", func(t *testing.T) {
		q := filter(`excludedKeys anyOf ["bravo"]`) + "&limit=1&offset=1"
		got, doc := list(t, q)
		if !slices.Equal(got, []string{"charlie"}) || doc["totalCount"] != float64(3) {
			t.Errorf("page %v, total %v", got, doc["totalCount"])
		}
		res := srv.Do(t, http.MethodGet, segsPath("p", "production")+q, nil)
		links := apptest.LinkHrefs(t, res)
		for _, name := range []string{"self", "first", "prev", "next", "last"} {
			if links[name] == "" {
				t.Errorf("no %s link: %v", name, links)
			}
		}
		if next := apptest.Query(t, links["next"]); next.Get("offset") != "2" || next.Get("filter") != `excludedKeys anyOf ["bravo"]` {
			t.Errorf("next %v", next)
		}
	})
	for _, c := range []struct {
		name, query string
		parts       []string
	}{
		{"an unknown filter field is refused naming it", filter(`color equals "red"`), []string{`"color"`}},
		{"a filter field with the wrong operator is refused naming the right one", filter(`tags equals "vip"`), []string{"anyOf"}},
		{"a view filter is refused: there are no views", filter(`view equals "v"`), []string{"view"}},
		{"unbounded with a value other than true or false is refused", filter(`unbounded equals maybe`), []string{"true or false"}},
		{"an unknown sort field is refused naming it", "?sort=color", []string{`"color"`}},
		{"a limit above the page size is refused", "?limit=51", []string{"limit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, segsPath("p", "production")+c.query, nil), http.StatusBadRequest, "invalid_request", c.parts...)
		})
	}
}

func TestSegmentConcurrentCreatesOfOneKey(t *testing.T) {
	bt, err := bolt.Open(filepath.Join(t.TempDir(), "race.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	table := &storetest.Barrier{Table: bt}
	srv := apptest.New(t, apptest.WithTable(table))
	srv.MustCreateProject(t, "p")
	for round := range 3 {
		key := "race-" + string(rune('a'+round))
		table.Arm(2)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = srv.Do(t, http.MethodPost, segsPath("p", "production"), map[string]any{"key": key, "name": "Racer"}).Status
			}()
		}
		wg.Wait()
		slices.Sort(statuses)
		if !slices.Equal(statuses, []int{http.StatusCreated, http.StatusConflict}) {
			t.Errorf("round %d: statuses %v, want one 201 and one 409", round, statuses)
		}
		if d := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", key), nil), http.StatusOK); d.Generation != 1 {
			t.Errorf("round %d: generation %d, want 1", round, d.Generation)
		}
	}
}

func TestSegmentsGoWithTheirEnvironmentAndProject(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	srv.MustCreateEnvironment(t, "p", "scratch", nil)
	createSeg(t, srv, "p", "scratch", map[string]any{"key": "old", "name": "Old", "unbounded": true})
	createSeg(t, srv, "p", "production", map[string]any{"key": "kept", "name": "Kept"})

	t.Run("an environment created again with the key of a deleted one has none of its segments", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.EnvPath("p", "scratch"), nil), http.StatusNoContent)
		srv.MustCreateEnvironment(t, "p", "scratch", nil)
		res := srv.Do(t, http.MethodGet, segsPath("p", "scratch"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if keys := apptest.ItemKeys(t, res); len(keys) != 0 {
			t.Errorf("the new environment lists %v", keys)
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, segPath("p", "scratch", "old"), nil), http.StatusNotFound, "not_found", `segment "old"`)
	})
	t.Run("a big segment made again there starts a generation of its own", func(t *testing.T) {
		if d := createSeg(t, srv, "p", "scratch", map[string]any{"key": "old", "name": "New", "unbounded": true}); d.Generation != 2 {
			t.Errorf("generation %d, want 2: the old members must not come back", d.Generation)
		}
	})
	t.Run("the other environments keep theirs", func(t *testing.T) {
		decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "kept"), nil), http.StatusOK)
	})
	t.Run("a project created again with the key of a deleted one has none of its segments", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.ProjectPath("p"), nil), http.StatusNoContent)
		srv.MustCreateProject(t, "p")
		srv.MustCreateEnvironment(t, "p", "scratch", nil)
		res := srv.Do(t, http.MethodGet, segsPath("p", "production"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if keys := apptest.ItemKeys(t, res); len(keys) != 0 {
			t.Errorf("the new project lists %v", keys)
		}
	})
	t.Run("a big segment made again in the new project starts a generation of its own", func(t *testing.T) {
		if d := createSeg(t, srv, "p", "scratch", map[string]any{"key": "old", "name": "Newer", "unbounded": true}); d.Generation != 3 {
			t.Errorf("generation %d, want 3: the old members must not come back", d.Generation)
		}
	})
}
