package endpoints_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Flags over HTTP: create, list, get, delete, JSON patch, and every
// semantic patch instruction, each checked through a following read.

func flagsPath(p string) string   { return api + "/flags/" + p }
func flagPath(p, f string) string { return flagsPath(p) + "/" + f }

const semanticType = "application/json; domain-model=flagplane.semanticpatch"

type flRollout struct {
	Variations []struct {
		Variation int `json:"variation"`
		Weight    int `json:"weight"`
	} `json:"variations"`
	BucketBy    string `json:"bucketBy"`
	ContextKind string `json:"contextKind"`
}

type flServe struct {
	Variation *int       `json:"variation"`
	Rollout   *flRollout `json:"rollout"`
}

type flClause struct {
	ID          string `json:"_id"`
	Attribute   string `json:"attribute"`
	Op          string `json:"op"`
	Values      []any  `json:"values"`
	ContextKind string `json:"contextKind"`
	Negate      bool   `json:"negate"`
}

type flRule struct {
	ID          string     `json:"_id"`
	Description string     `json:"description"`
	Clauses     []flClause `json:"clauses"`
	TrackEvents bool       `json:"trackEvents"`
	flServe
}

type flTarget struct {
	Values      []string `json:"values"`
	Variation   int      `json:"variation"`
	ContextKind string   `json:"contextKind"`
}

type flPrereq struct {
	Key       string `json:"key"`
	Variation int    `json:"variation"`
}

type flEnv struct {
	On              bool       `json:"on"`
	Archived        bool       `json:"archived"`
	Salt            string     `json:"salt"`
	LastModified    int64      `json:"lastModified"`
	Version         int        `json:"version"`
	Targets         []flTarget `json:"targets"`
	ContextTargets  []flTarget `json:"contextTargets"`
	Rules           []flRule   `json:"rules"`
	Fallthrough     flServe    `json:"fallthrough"`
	OffVariation    *int       `json:"offVariation"`
	Prerequisites   []flPrereq `json:"prerequisites"`
	TrackEvents     bool       `json:"trackEvents"`
	EnvironmentName string     `json:"_environmentName"`
	Site            struct {
		Href string `json:"href"`
	} `json:"_site"`
}

type flVariation struct {
	ID          string `json:"_id"`
	Value       any    `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type flDoc struct {
	Links        map[string]struct{ Href string } `json:"_links"`
	Key          string                           `json:"key"`
	Name         string                           `json:"name"`
	Description  string                           `json:"description"`
	Kind         string                           `json:"kind"`
	Version      int                              `json:"_version"`
	CreationDate int64                            `json:"creationDate"`
	Variations   []flVariation                    `json:"variations"`
	Defaults     struct {
		OnVariation  int `json:"onVariation"`
		OffVariation int `json:"offVariation"`
	} `json:"defaults"`
	Tags                   []string `json:"tags"`
	Temporary              bool     `json:"temporary"`
	Archived               bool     `json:"archived"`
	MaintainerID           string   `json:"maintainerId"`
	ClientSideAvailability struct {
		UsingMobileKey     bool `json:"usingMobileKey"`
		UsingEnvironmentID bool `json:"usingEnvironmentId"`
	} `json:"clientSideAvailability"`
	Environments map[string]flEnv `json:"environments"`
	Access       *struct {
		Allowed []struct{ Action string } `json:"allowed"`
		Denied  []struct{ Action string } `json:"denied"`
	} `json:"_access"`
}

// vid is the id of variation i.
func (d flDoc) vid(i int) string { return d.Variations[i].ID }

// prod is the flag's targeting in production.
func (d flDoc) prod() flEnv { return d.Environments["production"] }

func flDecode(t testing.TB, res *apptest.Response) flDoc {
	t.Helper()
	var d flDoc
	res.JSON(t, &d)
	return d
}

func flCreate(t testing.TB, srv *apptest.Server, p string, body map[string]any) flDoc {
	t.Helper()
	res := srv.Do(t, http.MethodPost, flagsPath(p), body)
	apptest.WantStatus(t, res, http.StatusCreated)
	return flDecode(t, res)
}

// abc creates a multivariate flag serving "a", "b" or "c" (on: a, off: c).
func abc(t testing.TB, srv *apptest.Server, p, key string) flDoc {
	t.Helper()
	return flCreate(t, srv, p, map[string]any{"key": key, "name": "Flag " + key,
		"variations": []map[string]any{{"value": "a"}, {"value": "b", "name": "Bee"}, {"value": "c"}},
		"defaults":   map[string]any{"onVariation": 0, "offVariation": 2}})
}

func flGet(t testing.TB, srv *apptest.Server, p, f string) flDoc {
	t.Helper()
	res := srv.Do(t, http.MethodGet, flagPath(p, f), nil)
	apptest.WantStatus(t, res, http.StatusOK)
	return flDecode(t, res)
}

// semantic sends a semantic patch.
func semantic(t testing.TB, srv *apptest.Server, p, f string, body any, headers ...string) *apptest.Response {
	t.Helper()
	return srv.Do(t, http.MethodPatch, flagPath(p, f), body, append([]string{"Content-Type", semanticType}, headers...)...)
}

// instr is one instruction: kind plus parameter pairs.
func instr(kind string, kv ...any) map[string]any {
	m := map[string]any{"kind": kind}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func sp(env string, ins ...map[string]any) map[string]any {
	body := map[string]any{"instructions": ins}
	if env != "" {
		body["environmentKey"] = env
	}
	return body
}

func intOf(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func values(ts []flTarget) map[string]string {
	out := map[string]string{}
	for _, t := range ts {
		kind := t.ContextKind
		if kind == "" {
			kind = "user"
		}
		keys := slices.Clone(t.Values)
		sort.Strings(keys)
		out[fmt.Sprintf("%s/%d", kind, t.Variation)] = strings.Join(keys, ",")
	}
	return out
}

func TestCreateFlag(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")

	t.Run("a flag without variations is boolean, serves true when on and false when off, in every environment", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, flagsPath("p"), map[string]any{"key": "dark-mode", "name": "Dark mode", "description": "Night theme", "tags": []string{"ui"}})
		apptest.WantStatus(t, res, http.StatusCreated)
		d := flDecode(t, res)
		if d.Kind != "boolean" || len(d.Variations) != 2 || d.Variations[0].Value != true || d.Variations[1].Value != false {
			t.Fatalf("kind %q variations %+v", d.Kind, d.Variations)
		}
		if d.vid(0) == "" || d.vid(0) == d.vid(1) {
			t.Errorf("variation ids %q and %q", d.vid(0), d.vid(1))
		}
		if d.Defaults.OnVariation != 0 || d.Defaults.OffVariation != 1 || !d.Temporary || d.Archived || d.Version != 1 || d.CreationDate == 0 {
			t.Errorf("defaults %+v temporary %v archived %v version %d created %d", d.Defaults, d.Temporary, d.Archived, d.Version, d.CreationDate)
		}
		if d.Links["self"].Href != flagPath("p", "dark-mode") || d.Links["parent"].Href != flagsPath("p") {
			t.Errorf("links %+v", d.Links)
		}
		if d.Access == nil {
			t.Errorf("no _access: %s", res.Body)
		}
		if len(d.Environments) != 2 {
			t.Fatalf("environments %v, want test and production", d.Environments)
		}
		for key, e := range d.Environments {
			if e.On || intOf(e.Fallthrough.Variation) != 0 || intOf(e.OffVariation) != 1 || e.Version < 1 || e.Salt == "" || e.LastModified == 0 {
				t.Errorf("%s: %+v", key, e)
			}
			if e.EnvironmentName == "" || e.Site.Href != "/p/"+key+"/features/dark-mode" {
				t.Errorf("%s: name %q site %q", key, e.EnvironmentName, e.Site.Href)
			}
			if e.Targets == nil || e.Rules == nil || e.Prerequisites == nil || e.ContextTargets == nil {
				t.Errorf("%s: a single flag shows every list, empty ones too: %+v", key, e)
			}
		}
		got := flGet(t, srv, "p", "dark-mode")
		if !reflect.DeepEqual(got, d) {
			t.Errorf("a following GET differs from the create answer:\n%+v\n%+v", got, d)
		}
		if got.ClientSideAvailability.UsingMobileKey != true || got.ClientSideAvailability.UsingEnvironmentID != false {
			t.Errorf("client-side availability %+v, want the project's default", got.ClientSideAvailability)
		}
	})

	t.Run("a multivariate flag keeps its values, names and the defaults given", func(t *testing.T) {
		d := flCreate(t, srv, "p", map[string]any{"key": "colors", "name": "Colors", "temporary": false, "maintainerId": "m1",
			"clientSideAvailability": map[string]any{"usingMobileKey": false, "usingEnvironmentId": true},
			"variations":             []map[string]any{{"value": "red", "name": "Red"}, {"value": "green", "description": "Go"}, {"value": "blue"}},
			"defaults":               map[string]any{"onVariation": 1, "offVariation": 2}})
		if d.Kind != "multivariate" || len(d.Variations) != 3 || d.Variations[0].Name != "Red" || d.Variations[1].Description != "Go" {
			t.Errorf("variations %+v", d.Variations)
		}
		if d.Temporary || d.MaintainerID != "m1" || !d.ClientSideAvailability.UsingEnvironmentID || d.ClientSideAvailability.UsingMobileKey {
			t.Errorf("settings %+v", d)
		}
		if intOf(d.prod().Fallthrough.Variation) != 1 || intOf(d.prod().OffVariation) != 2 {
			t.Errorf("production serves %+v off %v, want the defaults", d.prod().Fallthrough, intOf(d.prod().OffVariation))
		}
	})

	t.Run("a flag of JSON values is multivariate and defaults to its first and last variations", func(t *testing.T) {
		d := flCreate(t, srv, "p", map[string]any{"key": "limits", "name": "Limits",
			"variations": []map[string]any{{"value": map[string]any{"max": 1}}, {"value": map[string]any{"max": 2}}, {"value": []int{3}}}})
		if d.Kind != "multivariate" || d.Defaults.OnVariation != 0 || d.Defaults.OffVariation != 2 {
			t.Errorf("kind %q defaults %+v", d.Kind, d.Defaults)
		}
	})

	t.Run("isFlagOn turns the new flag on in every environment", func(t *testing.T) {
		d := flCreate(t, srv, "p", map[string]any{"key": "born-on", "name": "Born on", "isFlagOn": true})
		for key, e := range d.Environments {
			if !e.On {
				t.Errorf("%s is off", key)
			}
		}
	})

	t.Run("a flag whose key is taken is refused with 409", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, flagsPath("p"), map[string]any{"key": "dark-mode", "name": "Again"}), http.StatusConflict, "conflict", "dark-mode")
	})

	t.Run("a flag in a project that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, flagsPath("nope"), map[string]any{"key": "x", "name": "X"}), http.StatusNotFound, "not_found", "nope")
	})

	invalid := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"a flag without a key is refused naming key", map[string]any{"name": "X"}, []string{`"key"`}},
		{"a flag without a name is refused naming name", map[string]any{"key": "bad"}, []string{`"name"`}},
		{"a key with a space is refused", map[string]any{"key": "a b", "name": "X"}, []string{`"key"`}},
		{"one variation is refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": "a"}}}, []string{"variations", "at least two"}},
		{"variations of mixed JSON types are refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": "a"}, {"value": 1}}}, []string{"variations[1].value", "same JSON type"}},
		{"two equal values are refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": 1}, {"value": 1.0}}}, []string{"variations[1].value", "unique"}},
		{"a null value is refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": "a"}, {"value": nil}}}, []string{"variations[1].value"}},
		{"a variation without a value is refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": "a"}, {"name": "b"}}}, []string{"variations[1].value"}},
		{"three boolean variations are refused", map[string]any{"key": "bad", "name": "X", "variations": []map[string]any{{"value": true}, {"value": false}, {"value": true}}}, []string{"variations[2].value"}},
		{"a default on variation out of range is refused", map[string]any{"key": "bad", "name": "X", "defaults": map[string]any{"onVariation": 2, "offVariation": 0}}, []string{"defaults.onVariation"}},
		{"a default off variation out of range is refused", map[string]any{"key": "bad", "name": "X", "defaults": map[string]any{"onVariation": 0, "offVariation": -1}}, []string{"defaults.offVariation"}},
		{"defaults with one index only are refused", map[string]any{"key": "bad", "name": "X", "defaults": map[string]any{"onVariation": 0}}, []string{"defaults.offVariation"}},
		{"a bad tag is refused naming tags", map[string]any{"key": "bad", "name": "X", "tags": []string{"no spaces"}}, []string{`"tags"`}},
		{"a name of the wrong type is refused naming it", map[string]any{"key": "bad", "name": 5}, []string{`"name"`}},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPost, flagsPath("p"), tc.body), http.StatusBadRequest, "invalid_request", tc.parts...)
			if res := srv.Do(t, http.MethodGet, flagPath("p", "bad"), nil); res.Status != http.StatusNotFound {
				t.Errorf("the refused flag was stored: %d %s", res.Status, res.Body)
			}
		})
	}
}

func TestGetListAndDeleteFlags(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	for i, f := range []struct {
		key, name string
		tags      []string
	}{{"alpha", "Zulu", []string{"a", "b"}}, {"bravo", "Yankee", []string{"a"}}, {"charlie", "X-ray", nil}, {"delta", "Whiskey", []string{"b"}}, {"echo", "Victor", []string{"a", "b"}}} {
		body := map[string]any{"key": f.key, "name": f.name, "tags": f.tags}
		if i == 2 {
			body["temporary"] = false
		}
		flCreate(t, srv, "p", body)
	}
	res := semantic(t, srv, "p", "alpha", sp("production", instr("addUserTargets", "values", []string{"u1"}, "variationId", flGet(t, srv, "p", "alpha").vid(0))))
	apptest.WantStatus(t, res, http.StatusOK)

	list := func(t *testing.T, query string) (*apptest.Response, []string) {
		t.Helper()
		res := srv.Do(t, http.MethodGet, flagsPath("p")+query, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		return res, apptest.ItemKeys(t, res)
	}

	t.Run("a list holds every flag by creation date with its total count", func(t *testing.T) {
		res, keys := list(t, "")
		if !slices.Equal(keys, []string{"alpha", "bravo", "charlie", "delta", "echo"}) {
			t.Errorf("keys %v", keys)
		}
		var body struct {
			TotalCount int `json:"totalCount"`
		}
		res.JSON(t, &body)
		if body.TotalCount != 5 {
			t.Errorf("totalCount %d", body.TotalCount)
		}
	})

	t.Run("limit and offset cut pages and the links lead through them", func(t *testing.T) {
		res, keys := list(t, "?limit=2&offset=2")
		if !slices.Equal(keys, []string{"charlie", "delta"}) {
			t.Errorf("keys %v", keys)
		}
		links := apptest.LinkHrefs(t, res)
		for name, off := range map[string]string{"self": "2", "first": "0", "prev": "0", "next": "4", "last": "4"} {
			if q := apptest.Query(t, links[name]); q.Get("offset") != off || q.Get("limit") != "2" {
				t.Errorf("link %s = %q", name, links[name])
			}
		}
	})

	filters := []struct {
		name, query string
		want        []string
	}{
		{"a query filter matches key or name, ignoring case", "?filter=" + url.QueryEscape("query:RAV"), []string{"bravo"}},
		{"a query filter matches names too", "?filter=" + url.QueryEscape("query:whis"), []string{"delta"}},
		{"a tags filter keeps flags with every tag", "?filter=" + url.QueryEscape("tags:a+b"), []string{"alpha", "echo"}},
		{"a type filter keeps permanent flags", "?filter=" + url.QueryEscape("type:permanent"), []string{"charlie"}},
		{"sort by key descending", "?sort=-key", []string{"echo", "delta", "charlie", "bravo", "alpha"}},
		{"sort by name", "?sort=name", []string{"echo", "delta", "charlie", "bravo", "alpha"}},
	}
	for _, tc := range filters {
		t.Run(tc.name, func(t *testing.T) {
			if _, keys := list(t, tc.query); !slices.Equal(keys, tc.want) {
				t.Errorf("keys %v, want %v", keys, tc.want)
			}
		})
	}

	t.Run("sort by creation date descending puts the newest first", func(t *testing.T) {
		res, _ := list(t, "?sort=-creationDate")
		var page struct {
			Items []flDoc `json:"items"`
		}
		res.JSON(t, &page)
		for i := 1; i < len(page.Items); i++ {
			if page.Items[i].CreationDate > page.Items[i-1].CreationDate {
				t.Errorf("%s (%d) after %s (%d)", page.Items[i].Key, page.Items[i].CreationDate, page.Items[i-1].Key, page.Items[i-1].CreationDate)
			}
		}
	})

	t.Run("a list shows summaries: no target, rule or prerequisite lists unless summary=0", func(t *testing.T) {
		res, _ := list(t, "?filter="+url.QueryEscape("query:alpha"))
		var page struct {
			Items []map[string]any `json:"items"`
		}
		res.JSON(t, &page)
		prod := page.Items[0]["environments"].(map[string]any)["production"].(map[string]any)
		for _, f := range []string{"targets", "rules", "prerequisites", "contextTargets"} {
			if _, ok := prod[f]; ok {
				t.Errorf("summary shows %s: %v", f, prod)
			}
		}
		if _, ok := prod["fallthrough"]; !ok {
			t.Errorf("summary hides the fallthrough: %v", prod)
		}
		res, _ = list(t, "?summary=0&filter="+url.QueryEscape("query:alpha"))
		var full struct {
			Items []flDoc `json:"items"`
		}
		res.JSON(t, &full)
		if got := values(full.Items[0].prod().Targets); got["user/0"] != "u1" {
			t.Errorf("full list targets %v", got)
		}
	})

	t.Run("env narrows the environments shown, in a list and in a read", func(t *testing.T) {
		res, _ := list(t, "?env=test")
		var page struct {
			Items []flDoc `json:"items"`
		}
		res.JSON(t, &page)
		for _, it := range page.Items {
			if _, ok := it.Environments["test"]; !ok || len(it.Environments) != 1 {
				t.Errorf("%s environments %v", it.Key, it.Environments)
			}
		}
		d := flDecode(t, srv.Do(t, http.MethodGet, flagPath("p", "alpha")+"?env=production", nil))
		if _, ok := d.Environments["production"]; !ok || len(d.Environments) != 1 {
			t.Errorf("environments %v", d.Environments)
		}
	})

	t.Run("a filter field that is not supported is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagsPath("p")+"?filter=colour:red", nil), http.StatusBadRequest, "invalid_request", "colour")
	})

	t.Run("a sort field that is not supported is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagsPath("p")+"?sort=colour", nil), http.StatusBadRequest, "invalid_request", "colour")
	})

	t.Run("a list of a project that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagsPath("nope"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a flag that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagPath("p", "nope"), nil), http.StatusNotFound, "not_found", "nope")
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagPath("p", "bad key!"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a delete answers 204 and the flag is gone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, flagPath("p", "echo"), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagPath("p", "echo"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, flagPath("p", "echo"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a new environment shows every flag with its defaults", func(t *testing.T) {
		srv.MustCreateEnvironment(t, "p", "staging", nil)
		e, ok := flGet(t, srv, "p", "alpha").Environments["staging"]
		if !ok || e.On || intOf(e.Fallthrough.Variation) != 0 || intOf(e.OffVariation) != 1 || len(e.Targets) != 0 {
			t.Errorf("staging %+v", e)
		}
	})

	t.Run("deleting the project removes its flags", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, projectPath("p"), nil), http.StatusNoContent)
		srv.MustCreateProject(t, "p")
		apptest.WantError(t, srv.Do(t, http.MethodGet, flagPath("p", "alpha"), nil), http.StatusNotFound, "not_found")
		if _, keys := list(t, ""); len(keys) != 0 {
			t.Errorf("the new project lists the old flags: %v", keys)
		}
	})
}

func TestFlagJSONPatch(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	flCreate(t, srv, "p", map[string]any{"key": "pre", "name": "Prerequisite"})
	n := 0
	fresh := func(t *testing.T) flDoc {
		n++
		return abc(t, srv, "p", fmt.Sprintf("j%d", n))
	}
	rule := map[string]any{"variation": 1, "clauses": []map[string]any{{"attribute": "country", "op": "in", "values": []string{"SE"}}}}

	edits := []struct {
		name  string
		ops   func(d flDoc) []apptest.PatchOp
		check func(t *testing.T, before, after flDoc)
	}{
		{"a new name", func(flDoc) []apptest.PatchOp { return []apptest.PatchOp{apptest.Replace("/name", "Renamed")} },
			func(t *testing.T, _, a flDoc) {
				if a.Name != "Renamed" {
					t.Errorf("name %q", a.Name)
				}
			}},
		{"a new description, tags and temporary", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/description", "Words"), apptest.Add("/tags/-", "new"), apptest.Replace("/temporary", false)}
		}, func(t *testing.T, _, a flDoc) {
			if a.Description != "Words" || !slices.Equal(a.Tags, []string{"new"}) || a.Temporary {
				t.Errorf("description %q tags %v temporary %v", a.Description, a.Tags, a.Temporary)
			}
		}},
		{"client-side availability and a maintainer", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/clientSideAvailability", map[string]bool{"usingMobileKey": false, "usingEnvironmentId": true}), apptest.Add("/maintainerId", "m2")}
		}, func(t *testing.T, _, a flDoc) {
			if !a.ClientSideAvailability.UsingEnvironmentID || a.ClientSideAvailability.UsingMobileKey || a.MaintainerID != "m2" {
				t.Errorf("%+v %q", a.ClientSideAvailability, a.MaintainerID)
			}
		}},
		{"new defaults", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/defaults", map[string]int{"onVariation": 1, "offVariation": 0})}
		}, func(t *testing.T, _, a flDoc) {
			if a.Defaults.OnVariation != 1 || a.Defaults.OffVariation != 0 || intOf(a.prod().Fallthrough.Variation) != 1 {
				t.Errorf("defaults %+v production %+v", a.Defaults, a.prod().Fallthrough)
			}
		}},
		{"a new variation gets an id and the others keep theirs", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Add("/variations/-", map[string]any{"value": "d"}), apptest.Replace("/variations/1/name", "B")}
		}, func(t *testing.T, b, a flDoc) {
			if len(a.Variations) != 4 || a.Variations[3].Value != "d" || a.vid(3) == "" || a.Variations[1].Name != "B" {
				t.Fatalf("variations %+v", a.Variations)
			}
			for i := range 3 {
				if a.vid(i) != b.vid(i) {
					t.Errorf("variation %d id %q became %q", i, b.vid(i), a.vid(i))
				}
			}
		}},
		{"a removed variation renumbers what the patch left alone", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{{Op: "remove", Path: "/variations/1"}}
		}, func(t *testing.T, b, a flDoc) {
			if len(a.Variations) != 2 || a.Variations[1].Value != "c" || a.vid(1) != b.vid(2) {
				t.Fatalf("variations %+v", a.Variations)
			}
			if a.Defaults.OffVariation != 1 || intOf(a.prod().OffVariation) != 1 {
				t.Errorf("the off variation no longer serves c: defaults %+v production off %d", a.Defaults, intOf(a.prod().OffVariation))
			}
		}},
		{"production turned on, with a rule, targets, a rollout and an off variation", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{
				apptest.Replace("/environments/production/on", true),
				apptest.Add("/environments/production/rules/-", rule),
				apptest.Add("/environments/production/targets/-", map[string]any{"variation": 2, "values": []string{"u1"}}),
				apptest.Replace("/environments/production/fallthrough", map[string]any{"rollout": map[string]any{"variations": []map[string]int{{"variation": 0, "weight": 60000}, {"variation": 1, "weight": 40000}}}}),
				apptest.Replace("/environments/production/offVariation", 1),
			}
		}, func(t *testing.T, b, a flDoc) {
			p := a.prod()
			if !p.On || len(p.Rules) != 1 || p.Rules[0].ID == "" || p.Rules[0].Clauses[0].ID == "" || intOf(p.Rules[0].Variation) != 1 {
				t.Errorf("production %+v", p)
			}
			if values(p.Targets)["user/2"] != "u1" || p.Fallthrough.Rollout == nil || len(p.Fallthrough.Rollout.Variations) != 2 || intOf(p.OffVariation) != 1 {
				t.Errorf("production %+v", p)
			}
			if p.Version <= b.prod().Version || p.LastModified < b.prod().LastModified {
				t.Errorf("production version %d -> %d, lastModified %d -> %d", b.prod().Version, p.Version, b.prod().LastModified, p.LastModified)
			}
			if a.Environments["test"].Version != b.Environments["test"].Version || a.Environments["test"].On {
				t.Errorf("test changed: %+v", a.Environments["test"])
			}
		}},
		{"a prerequisite on another flag of the project", func(flDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "pre", "variation": 0})}
		}, func(t *testing.T, _, a flDoc) {
			if len(a.prod().Prerequisites) != 1 || a.prod().Prerequisites[0].Key != "pre" {
				t.Errorf("prerequisites %+v", a.prod().Prerequisites)
			}
		}},
		{"a patch wrapped with a comment", func(flDoc) []apptest.PatchOp { return nil },
			func(t *testing.T, _, a flDoc) {
				if a.Name != "Commented" {
					t.Errorf("name %q", a.Name)
				}
			}},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			before := fresh(t)
			var body any = tc.ops(before)
			if body.([]apptest.PatchOp) == nil {
				body = map[string]any{"comment": "why", "patch": []apptest.PatchOp{apptest.Replace("/name", "Commented")}}
			}
			res := srv.Do(t, http.MethodPatch, flagPath("p", before.Key), body)
			apptest.WantStatus(t, res, http.StatusOK)
			after := flGet(t, srv, "p", before.Key)
			if !reflect.DeepEqual(flDecode(t, res), after) {
				t.Errorf("the patch answer differs from a following GET")
			}
			if after.Version != before.Version+1 {
				t.Errorf("_version %d -> %d", before.Version, after.Version)
			}
			tc.check(t, before, after)
		})
	}

	t.Run("a patch that changes nothing stores nothing", func(t *testing.T) {
		d := fresh(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, flagPath("p", d.Key), []apptest.PatchOp{apptest.Replace("/name", d.Name)}), http.StatusOK)
		if got := flGet(t, srv, "p", d.Key); got.Version != d.Version {
			t.Errorf("_version %d -> %d", d.Version, got.Version)
		}
	})

	bad := []struct {
		name   string
		ops    []apptest.PatchOp
		status int
		parts  []string
	}{
		{"the key is read-only", []apptest.PatchOp{apptest.Replace("/key", "other")}, 400, []string{"/key"}},
		{"the version is read-only", []apptest.PatchOp{apptest.Replace("/_version", 9)}, 400, []string{"/_version"}},
		{"a whole environment cannot be replaced", []apptest.PatchOp{apptest.Replace("/environments/production", map[string]any{})}, 400, []string{"/environments/production"}},
		{"an environment's salt is read-only", []apptest.PatchOp{apptest.Replace("/environments/production/salt", "x")}, 400, []string{"salt"}},
		{"rollout weights must add up to 100000", []apptest.PatchOp{apptest.Replace("/environments/production/fallthrough", map[string]any{"rollout": map[string]any{"variations": []map[string]int{{"variation": 0, "weight": 50000}}}})}, 400, []string{"environments.production.fallthrough.rollout.variations", "100000"}},
		{"a clause operator must be known", []apptest.PatchOp{apptest.Add("/environments/production/rules/-", map[string]any{"variation": 0, "clauses": []map[string]any{{"attribute": "a", "op": "like", "values": []string{"x"}}}})}, 400, []string{"environments.production.rules[0].clauses[0].op", "like"}},
		{"a variation index must exist", []apptest.PatchOp{apptest.Replace("/environments/production/offVariation", 7)}, 400, []string{"environments.production.offVariation", "7"}},
		{"a rule serves a variation or a rollout", []apptest.PatchOp{apptest.Add("/environments/production/rules/-", map[string]any{"clauses": []map[string]any{{"attribute": "a", "op": "in", "values": []string{"x"}}}})}, 400, []string{"environments.production.rules[0]"}},
		{"a removed variation still served is refused", []apptest.PatchOp{{Op: "remove", Path: "/variations/0"}}, 400, []string{"variations", "default on variation"}},
		{"variation values must stay unique", []apptest.PatchOp{apptest.Replace("/variations/1/value", "a")}, 400, []string{"variations[1].value", "unique"}},
		{"variation values keep one JSON type", []apptest.PatchOp{apptest.Replace("/variations/1/value", 2)}, 400, []string{"variations[1].value"}},
		{"a context is targeted by one variation", []apptest.PatchOp{apptest.Add("/environments/production/targets/-", map[string]any{"variation": 0, "values": []string{"u"}}), apptest.Add("/environments/production/targets/-", map[string]any{"variation": 1, "values": []string{"u"}})}, 400, []string{"already targeted"}},
		{"a prerequisite must exist in the project", []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "ghost", "variation": 0})}, 400, []string{"ghost"}},
		{"a prerequisite variation must exist", []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "pre", "variation": 5})}, 400, []string{"pre", "5"}},
		{"a flag is not its own prerequisite", []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "SELF", "variation": 0})}, 400, []string{"own prerequisite"}},
		{"a value of the wrong type names its field", []apptest.PatchOp{apptest.Replace("/environments/production/on", "yes")}, 400, []string{"on"}},
		{"a failed test is a 422", []apptest.PatchOp{{Op: "test", Path: "/name", Value: "not the name"}, apptest.Replace("/name", "x")}, 422, nil},
		{"a path in an environment that does not exist is a 422", []apptest.PatchOp{apptest.Replace("/environments/nowhere/on", true)}, 422, nil},
	}
	for _, tc := range bad {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			d := fresh(t)
			ops := slices.Clone(tc.ops)
			for i := range ops {
				if m, ok := ops[i].Value.(map[string]any); ok && m["key"] == "SELF" {
					ops[i].Value = map[string]any{"key": d.Key, "variation": 0}
				}
			}
			code := "invalid_request"
			if tc.status == 422 {
				code = "patch_failed"
			}
			apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", d.Key), ops), tc.status, code, tc.parts...)
			if got := flGet(t, srv, "p", d.Key); !reflect.DeepEqual(got, d) {
				t.Errorf("the refused patch changed the flag:\n%+v\n%+v", d, got)
			}
		})
	}

	t.Run("refused: a boolean flag keeps two variations", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", "pre"), []apptest.PatchOp{apptest.Add("/variations/-", map[string]any{"value": true})}), 400, "invalid_request", "variations")
	})

	t.Run("refused: prerequisites that would form a cycle", func(t *testing.T) {
		a := fresh(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, flagPath("p", a.Key), []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "pre", "variation": 0})}), 200)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", "pre"), []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": a.Key, "variation": 0})}),
			400, "invalid_request", "cycle", a.Key)
	})

	t.Run("refused: moving a variation another flag's prerequisite points at", func(t *testing.T) {
		a := fresh(t)
		b := fresh(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, flagPath("p", b.Key), []apptest.PatchOp{apptest.Add("/environments/test/prerequisites/-", map[string]any{"key": a.Key, "variation": 2})}), 200)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", a.Key), []apptest.PatchOp{{Op: "remove", Path: "/variations/1"}}),
			400, "invalid_request", b.Key, "prerequisite", "from index 2 to 1")
	})

	t.Run("a dry run is refused rather than applied", func(t *testing.T) {
		d := fresh(t)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", d.Key)+"?dryRun=true", []apptest.PatchOp{apptest.Replace("/name", "x")}), 400, "invalid_request", "dryRun")
		if got := flGet(t, srv, "p", d.Key); got.Name != d.Name {
			t.Errorf("the dry run renamed the flag")
		}
	})

	t.Run("a semantic patch body sent as JSON is refused, pointing at the Content-Type", func(t *testing.T) {
		d := fresh(t)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", d.Key), sp("production", instr("turnFlagOn"))), 400, "invalid_request", "domain-model=flagplane.semanticpatch")
		if got := flGet(t, srv, "p", d.Key); got.prod().On {
			t.Errorf("the flag was turned on")
		}
	})

	t.Run("concurrent patches answer 200 or 409 and lose nothing", func(t *testing.T) {
		d := fresh(t)
		won := concurrently(t, 10, func(i int) *apptest.Response {
			return srv.Do(t, http.MethodPatch, flagPath("p", d.Key), []apptest.PatchOp{apptest.Add("/tags/-", fmt.Sprintf("t%d", i))})
		})
		got := flGet(t, srv, "p", d.Key)
		for _, i := range won {
			if !slices.Contains(got.Tags, fmt.Sprintf("t%d", i)) {
				t.Errorf("tag t%d was accepted and lost: %v", i, got.Tags)
			}
		}
		if len(got.Tags) != len(won) || got.Version != d.Version+len(won) {
			t.Errorf("tags %v, version %d, after %d accepted patches", got.Tags, got.Version, len(won))
		}
	})

	t.Run("the audit entry carries the patch as delta and the comment", func(t *testing.T) {
		d := fresh(t)
		sent := []apptest.PatchOp{apptest.Replace("/environments/production/on", true)}
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, flagPath("p", d.Key), map[string]any{"comment": "go live", "patch": sent}), 200)
		e := apptest.LatestAuditEntry(t, srv)
		data, _ := json.Marshal(sent)
		if !apptest.SameJSON(t, e.Delta, data) || e.Comment != "go live" || e.Kind != "flag" || e.Access() != "updateOn proj/p:env/production:flag/"+d.Key {
			t.Errorf("entry %s %q %q delta %s", e.Kind, e.Access(), e.Comment, e.Delta)
		}
	})
}

// concurrently runs call n times at once; each answer must be 200 or 409.
// It returns the indexes that got 200, and fails unless at least one did.
func concurrently(t *testing.T, n int, call func(i int) *apptest.Response) []int {
	t.Helper()
	var mu sync.Mutex
	var won []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := call(i)
			switch res.Status {
			case http.StatusOK:
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
			case http.StatusConflict:
			default:
				t.Errorf("request %d: status %d: %s", i, res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if len(won) == 0 {
		t.Fatalf("no request of %d succeeded", n)
	}
	return won
}

func TestFlagSemanticPatch(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	pre := flCreate(t, srv, "p", map[string]any{"key": "pre", "name": "Prerequisite"})
	pre2 := abc(t, srv, "p", "pre2")
	n := 0
	fresh := func(t *testing.T) flDoc {
		n++
		return abc(t, srv, "p", fmt.Sprintf("s%d", n))
	}
	country := []map[string]any{{"attribute": "country", "op": "in", "values": []string{"SE", "NO"}, "contextKind": "user"}}
	addRule := func(d flDoc, variation int) map[string]any {
		return instr("addRule", "clauses", country, "variationId", d.vid(variation), "description", "Nordics")
	}
	ruleID := func(d flDoc, i int) string { return d.prod().Rules[i].ID }

	type step = func(d flDoc) []map[string]any
	cases := []struct {
		name  string
		env   string // environmentKey; "-" sends none
		prep  step   // instructions run first, in the same environment
		ins   step
		check func(t *testing.T, before, after flDoc)
	}{
		{"turnFlagOn turns production on and leaves test off", "production", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOn")} },
			func(t *testing.T, b, a flDoc) {
				if !a.prod().On || a.Environments["test"].On {
					t.Errorf("production %v test %v", a.prod().On, a.Environments["test"].On)
				}
				if a.prod().Version <= b.prod().Version || a.prod().LastModified == 0 {
					t.Errorf("production version %d -> %d", b.prod().Version, a.prod().Version)
				}
			}},
		{"turnFlagOff turns production off", "production",
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOn")} },
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOff")} },
			func(t *testing.T, _, a flDoc) {
				if a.prod().On {
					t.Errorf("production is on")
				}
			}},
		{"addVariation appends a variation with a new id", "-", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addVariation", "value", "d", "name", "Dee", "description", "fourth")}
			},
			func(t *testing.T, _, a flDoc) {
				v := a.Variations[len(a.Variations)-1]
				if len(a.Variations) != 4 || v.Value != "d" || v.Name != "Dee" || v.Description != "fourth" || v.ID == "" {
					t.Errorf("variations %+v", a.Variations)
				}
			}},
		{"removeVariation removes an unused variation and renumbers the others", "-", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("removeVariation", "variationId", d.vid(1))}
			},
			func(t *testing.T, b, a flDoc) {
				if len(a.Variations) != 2 || a.vid(1) != b.vid(2) || a.Defaults.OffVariation != 1 || intOf(a.prod().OffVariation) != 1 {
					t.Errorf("variations %+v defaults %+v", a.Variations, a.Defaults)
				}
			}},
		{"updateVariation changes a variation's value, name and description", "-", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateVariation", "variationId", d.vid(1), "value", "bee", "name", "B", "description", "second")}
			},
			func(t *testing.T, b, a flDoc) {
				v := a.Variations[1]
				if v.Value != "bee" || v.Name != "B" || v.Description != "second" || v.ID != b.vid(1) {
					t.Errorf("variation %+v", v)
				}
			}},
		{"updateDefaultVariation picks the defaults by value", "-", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("updateDefaultVariation", "onVariationValue", "b", "offVariationValue", "a")}
			},
			func(t *testing.T, _, a flDoc) {
				if a.Defaults.OnVariation != 1 || a.Defaults.OffVariation != 0 {
					t.Errorf("defaults %+v", a.Defaults)
				}
			}},
		{"addUserTargets targets user keys with a variation", "production", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u1", "u2"}, "variationId", d.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/1": "u1,u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"removeUserTargets stops targeting user keys", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u1", "u2"}, "variationId", d.vid(1))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("removeUserTargets", "values", []string{"u1", "absent"}, "variationId", d.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/1": "u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"addTargets targets keys of a context kind", "production", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.vid(2)),
					instr("addTargets", "values", []string{"u9"}, "variationId", d.vid(0))}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"org/2": "o1"}) {
					t.Errorf("contextTargets %v", got)
				}
				if got := values(a.prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/0": "u9"}) {
					t.Errorf("targets %v: without a context kind, targets are users", got)
				}
			}},
		{"removeTargets stops targeting keys of a context kind", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addTargets", "contextKind", "org", "values", []string{"o1", "o2"}, "variationId", d.vid(2))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("removeTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.vid(2))}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"org/2": "o2"}) {
					t.Errorf("contextTargets %v", got)
				}
			}},
		{"clearUserTargets removes a variation's user targets only", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u1"}, "variationId", d.vid(1)),
					instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.vid(1))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("clearUserTargets", "variationId", d.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if len(a.prod().Targets) != 0 || values(a.prod().ContextTargets)["org/1"] != "o1" {
					t.Errorf("targets %v contextTargets %v", a.prod().Targets, a.prod().ContextTargets)
				}
			}},
		{"clearTargets removes a variation's targets of every kind", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u1"}, "variationId", d.vid(1)),
					instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.vid(1))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("clearTargets", "variationId", d.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if len(a.prod().Targets) != 0 || len(a.prod().ContextTargets) != 0 {
					t.Errorf("targets %v contextTargets %v", a.prod().Targets, a.prod().ContextTargets)
				}
			}},
		{"replaceTargets replaces every target", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"old"}, "variationId", d.vid(1))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("replaceTargets", "targets", []map[string]any{
					{"contextKind": "user", "variationId": d.vid(0), "values": []string{"u1"}},
					{"contextKind": "device", "variationId": d.vid(2), "values": []string{"d1"}}})}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/0": "u1"}) {
					t.Errorf("targets %v", got)
				}
				if got := values(a.prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"device/2": "d1"}) {
					t.Errorf("contextTargets %v", got)
				}
			}},
		{"replaceUserTargets replaces the user targets", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"old"}, "variationId", d.vid(1))}
			},
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("replaceUserTargets", "targets", []map[string]any{{"variationId": d.vid(2), "values": []string{"u1", "u2"}}})}
			},
			func(t *testing.T, _, a flDoc) {
				if got := values(a.prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/2": "u1,u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"addRule adds a rule serving a variation", "production", nil,
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 1)} },
			func(t *testing.T, _, a flDoc) {
				rules := a.prod().Rules
				if len(rules) != 1 || rules[0].ID == "" || intOf(rules[0].Variation) != 1 || rules[0].Description != "Nordics" {
					t.Fatalf("rules %+v", rules)
				}
				c := rules[0].Clauses[0]
				if c.ID == "" || c.Attribute != "country" || c.Op != "in" || c.ContextKind != "user" || !reflect.DeepEqual(c.Values, []any{"SE", "NO"}) || c.Negate {
					t.Errorf("clause %+v", c)
				}
			}},
		{"addRule adds a rule serving a rollout, before another rule", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addRule", "clauses", country, "beforeRuleId", ruleID(d, 0),
					"rolloutWeights", map[string]int{d.vid(0): 25000, d.vid(2): 75000}, "rolloutBucketBy", "email", "rolloutContextKind", "user")}
			},
			func(t *testing.T, b, a flDoc) {
				rules := a.prod().Rules
				if len(rules) != 2 || rules[1].ID != ruleID(b, 0) {
					t.Fatalf("rules %+v", rules)
				}
				r := rules[0].Rollout
				if r == nil || r.BucketBy != "email" || r.ContextKind != "user" || len(r.Variations) != 2 ||
					r.Variations[0].Variation != 0 || r.Variations[0].Weight != 25000 || r.Variations[1].Variation != 2 || r.Variations[1].Weight != 75000 {
					t.Errorf("rollout %+v", r)
				}
			}},
		{"removeRule removes a rule", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 1), addRule(d, 2)} },
			func(d flDoc) []map[string]any { return []map[string]any{instr("removeRule", "ruleId", ruleID(d, 0))} },
			func(t *testing.T, b, a flDoc) {
				if rules := a.prod().Rules; len(rules) != 1 || rules[0].ID != ruleID(b, 1) {
					t.Errorf("rules %+v", rules)
				}
			}},
		{"updateRuleVariationOrRollout changes what a rule serves", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateRuleVariationOrRollout", "ruleId", ruleID(d, 0), "variationId", d.vid(2))}
			},
			func(t *testing.T, _, a flDoc) {
				if r := a.prod().Rules[0]; intOf(r.Variation) != 2 || r.Rollout != nil {
					t.Errorf("rule %+v", r)
				}
			}},
		{"updateFallthroughVariationOrRollout serves a variation by default", "production", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateFallthroughVariationOrRollout", "variationId", d.vid(2))}
			},
			func(t *testing.T, _, a flDoc) {
				if intOf(a.prod().Fallthrough.Variation) != 2 || intOf(a.Environments["test"].Fallthrough.Variation) != 0 {
					t.Errorf("production %+v test %+v", a.prod().Fallthrough, a.Environments["test"].Fallthrough)
				}
			}},
		{"updateFallthroughVariationOrRollout serves a rollout by default", "production", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateFallthroughVariationOrRollout", "rolloutWeights", map[string]int{d.vid(1): 100000})}
			},
			func(t *testing.T, _, a flDoc) {
				r := a.prod().Fallthrough.Rollout
				if a.prod().Fallthrough.Variation != nil || r == nil || len(r.Variations) != 1 || r.Variations[0].Variation != 1 {
					t.Errorf("fallthrough %+v", a.prod().Fallthrough)
				}
			}},
		{"updateOffVariation changes the off variation", "production", nil,
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateOffVariation", "variationId", d.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if intOf(a.prod().OffVariation) != 1 {
					t.Errorf("off %d", intOf(a.prod().OffVariation))
				}
			}},
		{"addClauses adds clauses to a rule", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addClauses", "ruleId", ruleID(d, 0), "clauses", []map[string]any{{"attribute": "age", "op": "greaterThan", "values": []int{18}, "negate": true}})}
			},
			func(t *testing.T, _, a flDoc) {
				cs := a.prod().Rules[0].Clauses
				if len(cs) != 2 || cs[1].Attribute != "age" || !cs[1].Negate || cs[1].Values[0] != 18.0 || cs[1].ID == "" {
					t.Errorf("clauses %+v", cs)
				}
			}},
		{"removeClauses removes clauses of a rule", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addRule", "variationId", d.vid(0), "clauses", append(slices.Clone(country), map[string]any{"attribute": "age", "op": "lessThan", "values": []int{3}}))}
			},
			func(d flDoc) []map[string]any {
				r := d.prod().Rules[0]
				return []map[string]any{instr("removeClauses", "ruleId", r.ID, "clauseIds", []string{r.Clauses[0].ID})}
			},
			func(t *testing.T, _, a flDoc) {
				if cs := a.prod().Rules[0].Clauses; len(cs) != 1 || cs[0].Attribute != "age" {
					t.Errorf("clauses %+v", cs)
				}
			}},
		{"updateClause replaces a clause, keeping its id", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				r := d.prod().Rules[0]
				return []map[string]any{instr("updateClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID,
					"clause", map[string]any{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}})}
			},
			func(t *testing.T, b, a flDoc) {
				c := a.prod().Rules[0].Clauses[0]
				if c.ID != b.prod().Rules[0].Clauses[0].ID || c.Attribute != "email" || c.Op != "endsWith" {
					t.Errorf("clause %+v", c)
				}
			}},
		{"addValuesToClause adds values to a clause", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				r := d.prod().Rules[0]
				return []map[string]any{instr("addValuesToClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID, "values", []string{"DK", "SE"})}
			},
			func(t *testing.T, _, a flDoc) {
				if v := a.prod().Rules[0].Clauses[0].Values; !reflect.DeepEqual(v, []any{"SE", "NO", "DK"}) {
					t.Errorf("values %v", v)
				}
			}},
		{"removeValuesFromClause removes values from a clause", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				r := d.prod().Rules[0]
				return []map[string]any{instr("removeValuesFromClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID, "values", []string{"SE"})}
			},
			func(t *testing.T, _, a flDoc) {
				if v := a.prod().Rules[0].Clauses[0].Values; !reflect.DeepEqual(v, []any{"NO"}) {
					t.Errorf("values %v", v)
				}
			}},
		{"reorderRules puts the rules in the order given", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0), addRule(d, 1)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("reorderRules", "ruleIds", []string{ruleID(d, 1), ruleID(d, 0)})}
			},
			func(t *testing.T, b, a flDoc) {
				if ruleID(a, 0) != ruleID(b, 1) || ruleID(a, 1) != ruleID(b, 0) {
					t.Errorf("rules %+v", a.prod().Rules)
				}
			}},
		{"replaceRules replaces every rule", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0), addRule(d, 1)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("replaceRules", "rules", []map[string]any{{"variationId": d.vid(2), "description": "only", "trackEvents": true, "clauses": country}})}
			},
			func(t *testing.T, _, a flDoc) {
				if rules := a.prod().Rules; len(rules) != 1 || intOf(rules[0].Variation) != 2 || rules[0].Description != "only" || !rules[0].TrackEvents {
					t.Errorf("rules %+v", rules)
				}
			}},
		{"updateRuleDescription describes a rule", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateRuleDescription", "ruleId", ruleID(d, 0), "description", "Scandinavia")}
			},
			func(t *testing.T, _, a flDoc) {
				if a.prod().Rules[0].Description != "Scandinavia" {
					t.Errorf("rule %+v", a.prod().Rules[0])
				}
			}},
		{"updateRuleTrackEvents tracks a rule's events", "production",
			func(d flDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateRuleTrackEvents", "ruleId", ruleID(d, 0), "trackEvents", true)}
			},
			func(t *testing.T, _, a flDoc) {
				if !a.prod().Rules[0].TrackEvents {
					t.Errorf("rule %+v", a.prod().Rules[0])
				}
			}},
		{"updateTrackEvents tracks the flag's events in the environment", "production", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("updateTrackEvents", "trackEvents", true)} },
			func(t *testing.T, _, a flDoc) {
				if !a.prod().TrackEvents || a.Environments["test"].TrackEvents {
					t.Errorf("production %v test %v", a.prod().TrackEvents, a.Environments["test"].TrackEvents)
				}
			}},
		{"addPrerequisite makes another flag a prerequisite", "production", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addPrerequisite", "key", "pre", "variationId", pre.vid(0))}
			},
			func(t *testing.T, _, a flDoc) {
				if ps := a.prod().Prerequisites; len(ps) != 1 || ps[0] != (flPrereq{Key: "pre", Variation: 0}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"updatePrerequisite changes the variation required", "production",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addPrerequisite", "key", "pre", "variationId", pre.vid(0))}
			},
			func(flDoc) []map[string]any {
				return []map[string]any{instr("updatePrerequisite", "key", "pre", "variationId", pre.vid(1))}
			},
			func(t *testing.T, _, a flDoc) {
				if ps := a.prod().Prerequisites; len(ps) != 1 || ps[0] != (flPrereq{Key: "pre", Variation: 1}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"removePrerequisite removes a prerequisite", "production",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addPrerequisite", "key", "pre", "variationId", pre.vid(0))}
			},
			func(flDoc) []map[string]any { return []map[string]any{instr("removePrerequisite", "key", "pre")} },
			func(t *testing.T, _, a flDoc) {
				if ps := a.prod().Prerequisites; len(ps) != 0 {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"replacePrerequisites replaces every prerequisite", "production",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addPrerequisite", "key", "pre", "variationId", pre.vid(0))}
			},
			func(flDoc) []map[string]any {
				return []map[string]any{instr("replacePrerequisites", "prerequisites", []map[string]any{{"key": "pre2", "variationId": pre2.vid(2)}})}
			},
			func(t *testing.T, _, a flDoc) {
				if ps := a.prod().Prerequisites; len(ps) != 1 || ps[0] != (flPrereq{Key: "pre2", Variation: 2}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"addTags adds tags once", "-", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addTags", "values", []string{"x", "y", "x"})}
			},
			func(t *testing.T, _, a flDoc) {
				if !slices.Equal(a.Tags, []string{"x", "y"}) {
					t.Errorf("tags %v", a.Tags)
				}
			}},
		{"removeTags removes tags", "-",
			func(flDoc) []map[string]any { return []map[string]any{instr("addTags", "values", []string{"x", "y"})} },
			func(flDoc) []map[string]any { return []map[string]any{instr("removeTags", "values", []string{"x"})} },
			func(t *testing.T, _, a flDoc) {
				if !slices.Equal(a.Tags, []string{"y"}) {
					t.Errorf("tags %v", a.Tags)
				}
			}},
		{"updateName renames the flag", "-", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("updateName", "value", "Renamed")} },
			func(t *testing.T, _, a flDoc) {
				if a.Name != "Renamed" {
					t.Errorf("name %q", a.Name)
				}
			}},
		{"updateDescription describes the flag", "-", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("updateDescription", "value", "What it does")}
			},
			func(t *testing.T, _, a flDoc) {
				if a.Description != "What it does" {
					t.Errorf("description %q", a.Description)
				}
			}},
		{"makeFlagPermanent and makeFlagTemporary set temporary", "-", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("makeFlagPermanent")} },
			func(t *testing.T, _, a flDoc) {
				if a.Temporary {
					t.Errorf("the flag is temporary")
				}
				res := semantic(t, srv, "p", a.Key, sp("", instr("makeFlagTemporary")))
				apptest.WantStatus(t, res, http.StatusOK)
				if !flDecode(t, res).Temporary {
					t.Errorf("the flag is permanent")
				}
			}},
		{"turnOnClientSideAvailability and turnOffClientSideAvailability set client-side availability", "-", nil,
			func(flDoc) []map[string]any {
				return []map[string]any{instr("turnOnClientSideAvailability", "value", "usingEnvironmentId"), instr("turnOffClientSideAvailability", "value", "usingMobileKey")}
			},
			func(t *testing.T, _, a flDoc) {
				if !a.ClientSideAvailability.UsingEnvironmentID || a.ClientSideAvailability.UsingMobileKey {
					t.Errorf("%+v", a.ClientSideAvailability)
				}
			}},
		{"updateMaintainerMember and removeMaintainer set the maintainer", "-", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("updateMaintainerMember", "value", "m-1")} },
			func(t *testing.T, _, a flDoc) {
				if a.MaintainerID != "m-1" {
					t.Errorf("maintainer %q", a.MaintainerID)
				}
				res := semantic(t, srv, "p", a.Key, sp("", instr("removeMaintainer")))
				apptest.WantStatus(t, res, http.StatusOK)
				if m := flDecode(t, res).MaintainerID; m != "" {
					t.Errorf("maintainer %q", m)
				}
			}},
		{"archiveFlag archives the flag in every environment", "-", nil,
			func(flDoc) []map[string]any { return []map[string]any{instr("archiveFlag")} },
			func(t *testing.T, _, a flDoc) {
				if !a.Archived || !a.prod().Archived {
					t.Errorf("archived %v production %v", a.Archived, a.prod().Archived)
				}
			}},
		{"restoreFlag restores an archived flag", "-",
			func(flDoc) []map[string]any { return []map[string]any{instr("archiveFlag")} },
			func(flDoc) []map[string]any { return []map[string]any{instr("restoreFlag")} },
			func(t *testing.T, _, a flDoc) {
				if a.Archived {
					t.Errorf("the flag is archived")
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := fresh(t)
			env := tc.env
			if env == "-" {
				env = ""
			}
			if tc.prep != nil {
				apptest.WantStatus(t, semantic(t, srv, "p", d.Key, sp(env, tc.prep(d)...)), http.StatusOK)
				d = flGet(t, srv, "p", d.Key)
			}
			res := semantic(t, srv, "p", d.Key, map[string]any{"comment": "by instruction", "environmentKey": env, "instructions": tc.ins(d)})
			apptest.WantStatus(t, res, http.StatusOK)
			after := flGet(t, srv, "p", d.Key)
			if !reflect.DeepEqual(flDecode(t, res), after) {
				t.Errorf("the patch answer differs from a following GET")
			}
			if after.Version != d.Version+1 {
				t.Errorf("_version %d -> %d", d.Version, after.Version)
			}
			tc.check(t, d, after)
		})
	}

	t.Run("the instructions cover every kind the engine documents", func(t *testing.T) {
		seen := map[string]bool{}
		for _, tc := range cases {
			for _, in := range tc.ins(abcSample()) {
				seen[in["kind"].(string)] = true
			}
		}
		for _, kind := range []string{"turnFlagOn", "turnFlagOff", "addVariation", "removeVariation", "updateVariation", "updateDefaultVariation",
			"addUserTargets", "removeUserTargets", "addTargets", "removeTargets", "addRule", "removeRule", "updateRuleVariationOrRollout",
			"updateFallthroughVariationOrRollout", "updateOffVariation", "addTags", "removeTags", "updateName", "updateDescription", "archiveFlag", "restoreFlag"} {
			if !seen[kind] {
				t.Errorf("no subtest runs %s", kind)
			}
		}
	})

	failures := []struct {
		name   string
		env    string
		ins    func(d flDoc) []map[string]any
		status int
		parts  []string
	}{
		{"an unknown kind is a 400 naming its index", "production",
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOn"), instr("paintItBlack")} },
			400, []string{"instructions[1]", "paintItBlack"}},
		{"an instruction without a kind is a 400 naming its index", "production",
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOn"), {"values": []string{"x"}}} },
			400, []string{"instructions[1]", "kind"}},
		{"an environment-scoped instruction without environmentKey is a 400 naming it", "",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("updateName", "value", "x"), instr("turnFlagOn")}
			},
			400, []string{"instructions[1]", "environmentKey"}},
		{"a missing parameter is a 400 naming it", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "variationId", d.vid(0))}
			},
			400, []string{"instructions[0]", "instructions[0].values"}},
		{"a missing variation id is a 400 naming it", "production",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u"})}
			},
			400, []string{"instructions[0].variationId"}},
		{"a parameter of the wrong type is a 400 naming it", "-",
			func(flDoc) []map[string]any { return []map[string]any{instr("updateName", "value", 5)} },
			400, []string{"instructions[0].value", "string"}},
		{"a rule with an unknown operator is a 400", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addRule", "variationId", d.vid(0), "clauses", []map[string]any{{"attribute": "a", "op": "like", "values": []string{"x"}}})}
			},
			400, []string{"instructions[0]", "like"}},
		{"rollout weights that do not add up to 100000 are a 400", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateFallthroughVariationOrRollout", "rolloutWeights", map[string]int{d.vid(0): 10})}
			},
			400, []string{"instructions[0].rolloutWeights", "100000"}},
		{"an unknown variation id in the middle is a 422 and nothing applies", "production",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("turnFlagOn"), instr("addUserTargets", "values", []string{"u"}, "variationId", "nope"), instr("addTags", "values", []string{"t"})}
			},
			422, []string{"instructions[1]", "addUserTargets", "nope"}},
		{"an unknown rule id is a 422", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("updateRuleVariationOrRollout", "ruleId", "ghost", "variationId", d.vid(0))}
			},
			422, []string{"instructions[0]", "ghost"}},
		{"a key targeted by another variation is a 422", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addUserTargets", "values", []string{"u"}, "variationId", d.vid(0)), instr("addUserTargets", "values", []string{"u"}, "variationId", d.vid(1))}
			},
			422, []string{"instructions[1]", "already targeted"}},
		{"removing a variation still served is a 422", "-",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("removeVariation", "variationId", d.vid(0))}
			},
			422, []string{"instructions[0]", "in use"}},
		{"adding a value the flag already has is a 422", "-",
			func(flDoc) []map[string]any { return []map[string]any{instr("addVariation", "value", "a")} },
			422, []string{"instructions[0]", "unique"}},
		{"an unknown default value is a 422", "-",
			func(flDoc) []map[string]any {
				return []map[string]any{instr("updateDefaultVariation", "onVariationValue", "zzz")}
			},
			422, []string{"instructions[0]", "zzz"}},
		{"a prerequisite on the flag itself is a 422", "production",
			func(d flDoc) []map[string]any {
				return []map[string]any{instr("addPrerequisite", "key", d.Key, "variationId", d.vid(0))}
			},
			422, []string{"instructions[0]", "own prerequisite"}},
		{"an environment that does not exist is a 404", "nowhere",
			func(flDoc) []map[string]any { return []map[string]any{instr("turnFlagOn")} },
			404, []string{"nowhere"}},
	}
	for _, tc := range failures {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			d := fresh(t)
			env := tc.env
			if env == "-" {
				env = ""
			}
			code := map[int]string{400: "invalid_request", 404: "not_found", 422: "patch_failed"}[tc.status]
			apptest.WantError(t, semantic(t, srv, "p", d.Key, sp(env, tc.ins(d)...)), tc.status, code, tc.parts...)
			if got := flGet(t, srv, "p", d.Key); !reflect.DeepEqual(got, d) {
				t.Errorf("the refused patch changed the flag:\n%+v\n%+v", d, got)
			}
		})
	}

	t.Run("refused: an archived flag changes only by being restored", func(t *testing.T) {
		d := fresh(t)
		apptest.WantStatus(t, semantic(t, srv, "p", d.Key, sp("", instr("archiveFlag"))), 200)
		apptest.WantError(t, semantic(t, srv, "p", d.Key, sp("production", instr("turnFlagOn"))), 422, "patch_failed", "archived")
		apptest.WantStatus(t, semantic(t, srv, "p", d.Key, sp("production", instr("restoreFlag"), instr("turnFlagOn"))), 200)
	})

	t.Run("refused: archiving a prerequisite of a live flag", func(t *testing.T) {
		a, b := fresh(t), fresh(t)
		apptest.WantStatus(t, semantic(t, srv, "p", b.Key, sp("test", instr("addPrerequisite", "key", a.Key, "variationId", a.vid(0)))), 200)
		apptest.WantError(t, semantic(t, srv, "p", a.Key, sp("", instr("archiveFlag"))), 422, "patch_failed", "instructions[0]", b.Key)
	})

	t.Run("refused: prerequisites that would form a cycle", func(t *testing.T) {
		a, b := fresh(t), fresh(t)
		apptest.WantStatus(t, semantic(t, srv, "p", b.Key, sp("test", instr("addPrerequisite", "key", a.Key, "variationId", a.vid(0)))), 200)
		apptest.WantError(t, semantic(t, srv, "p", a.Key, sp("test", instr("addPrerequisite", "key", b.Key, "variationId", b.vid(0)))), 422, "patch_failed", "instructions[0]", "cycle")
	})

	envelopes := []struct {
		name  string
		body  any
		parts []string
	}{
		{"a body that is not an object", `[{"kind":"turnFlagOn"}]`, []string{"instructions"}},
		{"a body without instructions", map[string]any{"environmentKey": "production"}, []string{"instructions"}},
		{"an empty instruction list", map[string]any{"instructions": []any{}}, []string{"instructions"}},
		{"an instruction that is not an object", map[string]any{"instructions": []any{"turnFlagOn"}}, []string{"instructions[0]"}},
		{"instructions of the wrong type", map[string]any{"instructions": "turnFlagOn"}, []string{"instructions"}},
	}
	for _, tc := range envelopes {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			d := fresh(t)
			apptest.WantError(t, semantic(t, srv, "p", d.Key, tc.body), 400, "invalid_request", tc.parts...)
		})
	}

	t.Run("a semantic patch without the Content-Type parameter is a 400", func(t *testing.T) {
		d := fresh(t)
		res := srv.Do(t, http.MethodPatch, flagPath("p", d.Key), sp("production", instr("turnFlagOn")), "Content-Type", "application/json")
		apptest.WantError(t, res, 400, "invalid_request", "domain-model")
		if flGet(t, srv, "p", d.Key).prod().On {
			t.Errorf("the flag was turned on")
		}
	})

	t.Run("the audit entry has the comment and no delta", func(t *testing.T) {
		d := fresh(t)
		apptest.WantStatus(t, semantic(t, srv, "p", d.Key, map[string]any{"comment": "launch", "environmentKey": "production", "instructions": []any{instr("turnFlagOn")}}), 200)
		e := apptest.LatestAuditEntry(t, srv)
		if string(e.Delta) != "null" || e.Comment != "launch" || e.Kind != "flag" || e.Access() != "updateOn proj/p:env/production:flag/"+d.Key {
			t.Errorf("entry %s %q %q delta %s", e.Kind, e.Access(), e.Comment, e.Delta)
		}
		var prev, cur flDoc
		_ = json.Unmarshal(e.PreviousVersion, &prev)
		_ = json.Unmarshal(e.CurrentVersion, &cur)
		if prev.Environments["production"].On || !cur.Environments["production"].On {
			t.Errorf("previous %s current %s", e.PreviousVersion, e.CurrentVersion)
		}
	})

	t.Run("concurrent semantic patches answer 200 or 409 and lose nothing", func(t *testing.T) {
		d := fresh(t)
		won := concurrently(t, 10, func(i int) *apptest.Response {
			return semantic(t, srv, "p", d.Key, sp("production", instr("addUserTargets", "values", []string{fmt.Sprintf("user-%d", i)}, "variationId", d.vid(1))))
		})
		got := flGet(t, srv, "p", d.Key)
		keys := strings.Split(values(got.prod().Targets)["user/1"], ",")
		for _, i := range won {
			if !slices.Contains(keys, fmt.Sprintf("user-%d", i)) {
				t.Errorf("user-%d was accepted and lost: %v", i, keys)
			}
		}
		if len(keys) != len(won) || got.Version != d.Version+len(won) {
			t.Errorf("targets %v, version %d, after %d accepted patches", keys, got.Version, len(won))
		}
	})
}

// abcSample is a flag document with variation and rule ids, for reading
// the kinds of the cases' instructions without a server.
func abcSample() flDoc {
	d := flDoc{Variations: []flVariation{{ID: "a"}, {ID: "b"}, {ID: "c"}}, Environments: map[string]flEnv{}}
	d.Environments["production"] = flEnv{Rules: []flRule{{ID: "r0", Clauses: []flClause{{ID: "c0"}}}, {ID: "r1", Clauses: []flClause{{ID: "c1"}}}}}
	return d
}

func TestFlagAuthorization(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	abc(t, srv, "p", "f")
	_, reader := srv.MustCreateToken(t, map[string]any{"name": "r", "role": "reader"})
	apptest.CreateRole(t, srv, "flag-switcher", "", map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"updateOn"}})
	_, switcher := srv.MustCreateToken(t, map[string]any{"name": "s", "customRoleIds": []string{"flag-switcher"}})

	t.Run("a reader may read a flag but not patch it", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, flagPath("p", "f"), nil, "Authorization", reader)
		apptest.WantStatus(t, res, http.StatusOK)
		d := flDecode(t, res)
		var denied []string
		for _, a := range d.Access.Denied {
			denied = append(denied, a.Action)
		}
		if !slices.Contains(denied, "updateName") || !slices.Contains(denied, "deleteFlag") {
			t.Errorf("_access denied %v", denied)
		}
		// Targeting rights are decided, and reported, per environment.
		var envAccess struct {
			Environments map[string]struct {
				Access struct {
					Denied []struct{ Action string } `json:"denied"`
				} `json:"_access"`
			} `json:"environments"`
		}
		res.JSON(t, &envAccess)
		denied = nil
		for _, a := range envAccess.Environments["production"].Access.Denied {
			denied = append(denied, a.Action)
		}
		if !slices.Contains(denied, "updateOn") || !slices.Contains(denied, "updateRules") {
			t.Errorf("production _access denied %v", denied)
		}
		apptest.WantError(t, semantic(t, srv, "p", "f", sp("production", instr("turnFlagOn")), "Authorization", reader), 403, "forbidden", "updateOn")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Authorization", reader), 403, "forbidden", "updateName")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, flagPath("p", "f"), nil, "Authorization", reader), 403, "forbidden", "deleteFlag")
		apptest.WantError(t, srv.Do(t, http.MethodPost, flagsPath("p"), map[string]any{"key": "g", "name": "G"}, "Authorization", reader), 403, "forbidden", "createFlag")
	})

	t.Run("the admin's _access allows every flag action", func(t *testing.T) {
		d := flGet(t, srv, "p", "f")
		if d.Access == nil || len(d.Access.Denied) != 0 || len(d.Access.Allowed) == 0 {
			t.Errorf("_access %+v", d.Access)
		}
	})

	t.Run("a role allowing only updateOn may turn the flag on", func(t *testing.T) {
		apptest.WantStatus(t, semantic(t, srv, "p", "f", sp("production", instr("turnFlagOn")), "Authorization", switcher), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, flagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/test/on", true)}, "Authorization", switcher), http.StatusOK)
		d := flGet(t, srv, "p", "f")
		if !d.prod().On || !d.Environments["test"].On {
			t.Errorf("production %v test %v", d.prod().On, d.Environments["test"].On)
		}
	})

	t.Run("a role allowing only updateOn may not rename the flag, nor mix a rename into an allowed change", func(t *testing.T) {
		apptest.WantError(t, semantic(t, srv, "p", "f", sp("", instr("updateName", "value", "x")), "Authorization", switcher), 403, "forbidden", "updateName")
		apptest.WantError(t, semantic(t, srv, "p", "f", sp("production", instr("turnFlagOff"), instr("updateName", "value", "x")), "Authorization", switcher), 403, "forbidden", "updateName")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, flagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Authorization", switcher), 403, "forbidden", "updateName")
		if d := flGet(t, srv, "p", "f"); d.Name != "Flag f" || !d.prod().On {
			t.Errorf("name %q on %v", d.Name, d.prod().On)
		}
	})

	t.Run("a malformed semantic patch is a 400 before the authorization check", func(t *testing.T) {
		apptest.WantError(t, semantic(t, srv, "p", "f", sp("production", instr("paintItBlack")), "Authorization", switcher), 400, "invalid_request", "paintItBlack")
	})
}
