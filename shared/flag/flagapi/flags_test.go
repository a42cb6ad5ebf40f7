package flagapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Flags over HTTP: create, list, get, delete, JSON patch, and every
// semantic patch instruction, each checked through a following read.

func TestCreateFlag(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")

	t.Run("a flag without variations is boolean, serves true when on and false when off, in every environment", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "dark-mode", "name": "Dark mode", "description": "Night theme", "tags": []string{"ui"}})
		apptest.WantStatus(t, res, http.StatusCreated)
		d := apptest.DecodeFlag(t, res)
		if d.Kind != "boolean" || len(d.Variations) != 2 || d.Variations[0].Value != true || d.Variations[1].Value != false {
			t.Fatalf("kind %q variations %+v", d.Kind, d.Variations)
		}
		if d.VID(0) == "" || d.VID(0) == d.VID(1) {
			t.Errorf("variation ids %q and %q", d.VID(0), d.VID(1))
		}
		if d.Defaults.OnVariation != 0 || d.Defaults.OffVariation != 1 || !d.Temporary || d.Archived || d.Version != 1 || d.CreationDate == 0 {
			t.Errorf("defaults %+v temporary %v archived %v version %d created %d", d.Defaults, d.Temporary, d.Archived, d.Version, d.CreationDate)
		}
		if d.Links["self"].Href != apptest.FlagPath("p", "dark-mode") || d.Links["parent"].Href != apptest.FlagsPath("p") {
			t.Errorf("links %+v", d.Links)
		}
		if d.Access == nil {
			t.Errorf("no _access: %s", res.Body)
		}
		if len(d.Environments) != 2 {
			t.Fatalf("environments %v, want test and production", d.Environments)
		}
		for key, e := range d.Environments {
			if e.On || apptest.IntOf(e.Fallthrough.Variation) != 0 || apptest.IntOf(e.OffVariation) != 1 || e.Version < 1 || e.Salt == "" || e.LastModified == 0 {
				t.Errorf("%s: %+v", key, e)
			}
			if e.EnvironmentName == "" || e.Site.Href != "/p/"+key+"/features/dark-mode" {
				t.Errorf("%s: name %q site %q", key, e.EnvironmentName, e.Site.Href)
			}
			if e.Targets == nil || e.Rules == nil || e.Prerequisites == nil || e.ContextTargets == nil {
				t.Errorf("%s: a single flag shows every list, empty ones too: %+v", key, e)
			}
		}
		got := apptest.GetFlag(t, srv, "p", "dark-mode")
		if !reflect.DeepEqual(got, d) {
			t.Errorf("a following GET differs from the create answer:\n%+v\n%+v", got, d)
		}
		if got.ClientSideAvailability.UsingMobileKey != true || got.ClientSideAvailability.UsingEnvironmentID != false {
			t.Errorf("client-side availability %+v, want the project's default", got.ClientSideAvailability)
		}
	})

	t.Run("a multivariate flag keeps its values, names and the defaults given", func(t *testing.T) {
		d := apptest.CreateFlag(t, srv, "p", map[string]any{"key": "colors", "name": "Colors", "temporary": false, "maintainerId": "m1",
			"clientSideAvailability": map[string]any{"usingMobileKey": false, "usingEnvironmentId": true},
			"variations":             []map[string]any{{"value": "red", "name": "Red"}, {"value": "green", "description": "Go"}, {"value": "blue"}},
			"defaults":               map[string]any{"onVariation": 1, "offVariation": 2}})
		if d.Kind != "multivariate" || len(d.Variations) != 3 || d.Variations[0].Name != "Red" || d.Variations[1].Description != "Go" {
			t.Errorf("variations %+v", d.Variations)
		}
		if d.Temporary || d.MaintainerID != "m1" || !d.ClientSideAvailability.UsingEnvironmentID || d.ClientSideAvailability.UsingMobileKey {
			t.Errorf("settings %+v", d)
		}
		if apptest.IntOf(d.Prod().Fallthrough.Variation) != 1 || apptest.IntOf(d.Prod().OffVariation) != 2 {
			t.Errorf("production serves %+v off %v, want the defaults", d.Prod().Fallthrough, apptest.IntOf(d.Prod().OffVariation))
		}
	})

	t.Run("a flag of JSON values is multivariate and defaults to its first and last variations", func(t *testing.T) {
		d := apptest.CreateFlag(t, srv, "p", map[string]any{"key": "limits", "name": "Limits",
			"variations": []map[string]any{{"value": map[string]any{"max": 1}}, {"value": map[string]any{"max": 2}}, {"value": []int{3}}}})
		if d.Kind != "multivariate" || d.Defaults.OnVariation != 0 || d.Defaults.OffVariation != 2 {
			t.Errorf("kind %q defaults %+v", d.Kind, d.Defaults)
		}
	})

	t.Run("isFlagOn turns the new flag on in every environment", func(t *testing.T) {
		d := apptest.CreateFlag(t, srv, "p", map[string]any{"key": "born-on", "name": "Born on", "isFlagOn": true})
		for key, e := range d.Environments {
			if !e.On {
				t.Errorf("%s is off", key)
			}
		}
	})

	t.Run("a flag whose key is taken is refused with 409", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "dark-mode", "name": "Again"}), http.StatusConflict, "conflict", "dark-mode")
	})

	t.Run("a flag in a project that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("nope"), map[string]any{"key": "x", "name": "X"}), http.StatusNotFound, "not_found", "nope")
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
			apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), tc.body), http.StatusBadRequest, "invalid_request", tc.parts...)
			if res := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "bad"), nil); res.Status != http.StatusNotFound {
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
		apptest.CreateFlag(t, srv, "p", body)
	}
	res := apptest.SemanticPatchFlag(t, srv, "p", "alpha", apptest.SemanticBody("production", apptest.Instr("addUserTargets", "values", []string{"u1"}, "variationId", apptest.GetFlag(t, srv, "p", "alpha").VID(0))))
	apptest.WantStatus(t, res, http.StatusOK)

	list := func(t *testing.T, query string) (*apptest.Response, []string) {
		t.Helper()
		res := srv.Do(t, http.MethodGet, apptest.FlagsPath("p")+query, nil)
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
			Items []apptest.FlagDoc `json:"items"`
		}
		res.JSON(t, &page)
		for i := 1; i < len(page.Items); i++ {
			if page.Items[i].CreationDate > page.Items[i-1].CreationDate {
				t.Errorf("%s (%d) after %s (%d)", page.Items[i].Key, page.Items[i].CreationDate, page.Items[i-1].Key, page.Items[i-1].CreationDate)
			}
		}
	})

	t.Run("a list shows summaries: no target, rule or prerequisite lists unless summary=0", func(t *testing.T) {
		res, _ := list(t, "?env=production&filter="+url.QueryEscape("query:alpha"))
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
		res, _ = list(t, "?summary=0&env=production&filter="+url.QueryEscape("query:alpha"))
		var full struct {
			Items []apptest.FlagDoc `json:"items"`
		}
		res.JSON(t, &full)
		if got := apptest.TargetValues(full.Items[0].Prod().Targets); got["user/0"] != "u1" {
			t.Errorf("full list targets %v", got)
		}
	})

	t.Run("env narrows the environments shown, in a list and in a read", func(t *testing.T) {
		res, _ := list(t, "?env=test")
		var page struct {
			Items []apptest.FlagDoc `json:"items"`
		}
		res.JSON(t, &page)
		for _, it := range page.Items {
			if _, ok := it.Environments["test"]; !ok || len(it.Environments) != 1 {
				t.Errorf("%s environments %v", it.Key, it.Environments)
			}
		}
		d := apptest.DecodeFlag(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "alpha")+"?env=production", nil))
		if _, ok := d.Environments["production"]; !ok || len(d.Environments) != 1 {
			t.Errorf("environments %v", d.Environments)
		}
	})

	t.Run("a filter field that is not supported is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagsPath("p")+"?filter=colour:red", nil), http.StatusBadRequest, "invalid_request", "colour")
	})

	t.Run("a sort field that is not supported is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagsPath("p")+"?sort=colour", nil), http.StatusBadRequest, "invalid_request", "colour")
	})

	t.Run("a list of a project that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagsPath("nope"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a flag that does not exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "nope"), nil), http.StatusNotFound, "not_found", "nope")
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "bad key!"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a delete answers 204 and the flag is gone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.FlagPath("p", "echo"), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "echo"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.FlagPath("p", "echo"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a new environment shows every flag with its defaults", func(t *testing.T) {
		srv.MustCreateEnvironment(t, "p", "staging", nil)
		e, ok := apptest.GetFlag(t, srv, "p", "alpha").Environments["staging"]
		if !ok || e.On || apptest.IntOf(e.Fallthrough.Variation) != 0 || apptest.IntOf(e.OffVariation) != 1 || len(e.Targets) != 0 {
			t.Errorf("staging %+v", e)
		}
	})

	t.Run("deleting the project removes its flags", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.ProjectPath("p"), nil), http.StatusNoContent)
		srv.MustCreateProject(t, "p")
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "alpha"), nil), http.StatusNotFound, "not_found")
		if _, keys := list(t, ""); len(keys) != 0 {
			t.Errorf("the new project lists the old flags: %v", keys)
		}
	})
}

func TestFlagJSONPatch(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.CreateFlag(t, srv, "p", map[string]any{"key": "pre", "name": "Prerequisite"})
	n := 0
	fresh := func(t *testing.T) apptest.FlagDoc {
		n++
		return apptest.ABCFlag(t, srv, "p", fmt.Sprintf("j%d", n))
	}
	rule := map[string]any{"variation": 1, "clauses": []map[string]any{{"attribute": "country", "op": "in", "values": []string{"SE"}}}}

	edits := []struct {
		name  string
		ops   func(d apptest.FlagDoc) []apptest.PatchOp
		check func(t *testing.T, before, after apptest.FlagDoc)
	}{
		{"a new name", func(apptest.FlagDoc) []apptest.PatchOp { return []apptest.PatchOp{apptest.Replace("/name", "Renamed")} },
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Name != "Renamed" {
					t.Errorf("name %q", a.Name)
				}
			}},
		{"a new description, tags and temporary", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/description", "Words"), apptest.Add("/tags/-", "new"), apptest.Replace("/temporary", false)}
		}, func(t *testing.T, _, a apptest.FlagDoc) {
			if a.Description != "Words" || !slices.Equal(a.Tags, []string{"new"}) || a.Temporary {
				t.Errorf("description %q tags %v temporary %v", a.Description, a.Tags, a.Temporary)
			}
		}},
		{"client-side availability and a maintainer", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/clientSideAvailability", map[string]bool{"usingMobileKey": false, "usingEnvironmentId": true}), apptest.Add("/maintainerId", "m2")}
		}, func(t *testing.T, _, a apptest.FlagDoc) {
			if !a.ClientSideAvailability.UsingEnvironmentID || a.ClientSideAvailability.UsingMobileKey || a.MaintainerID != "m2" {
				t.Errorf("%+v %q", a.ClientSideAvailability, a.MaintainerID)
			}
		}},
		{"new defaults", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Replace("/defaults", map[string]int{"onVariation": 1, "offVariation": 0})}
		}, func(t *testing.T, _, a apptest.FlagDoc) {
			if a.Defaults.OnVariation != 1 || a.Defaults.OffVariation != 0 || apptest.IntOf(a.Prod().Fallthrough.Variation) != 1 {
				t.Errorf("defaults %+v production %+v", a.Defaults, a.Prod().Fallthrough)
			}
		}},
		{"a new variation gets an id and the others keep theirs", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Add("/variations/-", map[string]any{"value": "d"}), apptest.Replace("/variations/1/name", "B")}
		}, func(t *testing.T, b, a apptest.FlagDoc) {
			if len(a.Variations) != 4 || a.Variations[3].Value != "d" || a.VID(3) == "" || a.Variations[1].Name != "B" {
				t.Fatalf("variations %+v", a.Variations)
			}
			for i := range 3 {
				if a.VID(i) != b.VID(i) {
					t.Errorf("variation %d id %q became %q", i, b.VID(i), a.VID(i))
				}
			}
		}},
		{"a removed variation renumbers what the patch left alone", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{{Op: "remove", Path: "/variations/1"}}
		}, func(t *testing.T, b, a apptest.FlagDoc) {
			if len(a.Variations) != 2 || a.Variations[1].Value != "c" || a.VID(1) != b.VID(2) {
				t.Fatalf("variations %+v", a.Variations)
			}
			if a.Defaults.OffVariation != 1 || apptest.IntOf(a.Prod().OffVariation) != 1 {
				t.Errorf("the off variation no longer serves c: defaults %+v production off %d", a.Defaults, apptest.IntOf(a.Prod().OffVariation))
			}
		}},
		{"production turned on, with a rule, targets, a rollout and an off variation", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{
				apptest.Replace("/environments/production/on", true),
				apptest.Add("/environments/production/rules/-", rule),
				apptest.Add("/environments/production/targets/-", map[string]any{"variation": 2, "values": []string{"u1"}}),
				apptest.Replace("/environments/production/fallthrough", map[string]any{"rollout": map[string]any{"variations": []map[string]int{{"variation": 0, "weight": 60000}, {"variation": 1, "weight": 40000}}}}),
				apptest.Replace("/environments/production/offVariation", 1),
			}
		}, func(t *testing.T, b, a apptest.FlagDoc) {
			p := a.Prod()
			if !p.On || len(p.Rules) != 1 || p.Rules[0].ID == "" || p.Rules[0].Clauses[0].ID == "" || apptest.IntOf(p.Rules[0].Variation) != 1 {
				t.Errorf("production %+v", p)
			}
			if apptest.TargetValues(p.Targets)["user/2"] != "u1" || p.Fallthrough.Rollout == nil || len(p.Fallthrough.Rollout.Variations) != 2 || apptest.IntOf(p.OffVariation) != 1 {
				t.Errorf("production %+v", p)
			}
			if p.Version <= b.Prod().Version || p.LastModified < b.Prod().LastModified {
				t.Errorf("production version %d -> %d, lastModified %d -> %d", b.Prod().Version, p.Version, b.Prod().LastModified, p.LastModified)
			}
			if a.Environments["test"].Version != b.Environments["test"].Version || a.Environments["test"].On {
				t.Errorf("test changed: %+v", a.Environments["test"])
			}
		}},
		{"a prerequisite on another flag of the project", func(apptest.FlagDoc) []apptest.PatchOp {
			return []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "pre", "variation": 0})}
		}, func(t *testing.T, _, a apptest.FlagDoc) {
			if len(a.Prod().Prerequisites) != 1 || a.Prod().Prerequisites[0].Key != "pre" {
				t.Errorf("prerequisites %+v", a.Prod().Prerequisites)
			}
		}},
		{"a patch wrapped with a comment", func(apptest.FlagDoc) []apptest.PatchOp { return nil },
			func(t *testing.T, _, a apptest.FlagDoc) {
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
			res := srv.Do(t, http.MethodPatch, apptest.FlagPath("p", before.Key), body)
			apptest.WantStatus(t, res, http.StatusOK)
			after := apptest.GetFlag(t, srv, "p", before.Key)
			if !reflect.DeepEqual(apptest.DecodeFlag(t, res), after) {
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
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), []apptest.PatchOp{apptest.Replace("/name", d.Name)}), http.StatusOK)
		if got := apptest.GetFlag(t, srv, "p", d.Key); got.Version != d.Version {
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
			apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), ops), tc.status, code, tc.parts...)
			if got := apptest.GetFlag(t, srv, "p", d.Key); !reflect.DeepEqual(got, d) {
				t.Errorf("the refused patch changed the flag:\n%+v\n%+v", d, got)
			}
		})
	}

	t.Run("refused: a boolean flag keeps two variations", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "pre"), []apptest.PatchOp{apptest.Add("/variations/-", map[string]any{"value": true})}), 400, "invalid_request", "variations")
	})

	t.Run("refused: prerequisites that would form a cycle", func(t *testing.T) {
		a := fresh(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", a.Key), []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": "pre", "variation": 0})}), 200)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "pre"), []apptest.PatchOp{apptest.Add("/environments/production/prerequisites/-", map[string]any{"key": a.Key, "variation": 0})}),
			400, "invalid_request", "cycle", a.Key)
	})

	t.Run("refused: moving a variation another flag's prerequisite points at", func(t *testing.T) {
		a := fresh(t)
		b := fresh(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", b.Key), []apptest.PatchOp{apptest.Add("/environments/test/prerequisites/-", map[string]any{"key": a.Key, "variation": 2})}), 200)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", a.Key), []apptest.PatchOp{{Op: "remove", Path: "/variations/1"}}),
			400, "invalid_request", b.Key, "prerequisite", "from index 2 to 1")
	})

	t.Run("a dry run is refused rather than applied", func(t *testing.T) {
		d := fresh(t)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key)+"?dryRun=true", []apptest.PatchOp{apptest.Replace("/name", "x")}), 400, "invalid_request", "dryRun")
		if got := apptest.GetFlag(t, srv, "p", d.Key); got.Name != d.Name {
			t.Errorf("the dry run renamed the flag")
		}
	})

	t.Run("a semantic patch body sent as JSON is refused, pointing at the Content-Type", func(t *testing.T) {
		d := fresh(t)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), apptest.SemanticBody("production", apptest.Instr("turnFlagOn"))), 400, "invalid_request", "domain-model=flagplane.semanticpatch")
		if got := apptest.GetFlag(t, srv, "p", d.Key); got.Prod().On {
			t.Errorf("the flag was turned on")
		}
	})

	t.Run("concurrent patches answer 200 or 409 and lose nothing", func(t *testing.T) {
		d := fresh(t)
		won := apptest.Concurrently(t, 10, func(i int) *apptest.Response {
			return srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), []apptest.PatchOp{apptest.Add("/tags/-", fmt.Sprintf("t%d", i))})
		})
		got := apptest.GetFlag(t, srv, "p", d.Key)
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
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), map[string]any{"comment": "go live", "patch": sent}), 200)
		e := apptest.LatestAuditEntry(t, srv)
		data, _ := json.Marshal(sent)
		if !apptest.SameJSON(t, e.Delta, data) || e.Comment != "go live" || e.Kind != "flag" || e.Access() != "updateOn proj/p:env/production:flag/"+d.Key {
			t.Errorf("entry %s %q %q delta %s", e.Kind, e.Access(), e.Comment, e.Delta)
		}
	})
}

func TestFlagSemanticPatch(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	pre := apptest.CreateFlag(t, srv, "p", map[string]any{"key": "pre", "name": "Prerequisite"})
	pre2 := apptest.ABCFlag(t, srv, "p", "pre2")
	n := 0
	fresh := func(t *testing.T) apptest.FlagDoc {
		n++
		return apptest.ABCFlag(t, srv, "p", fmt.Sprintf("s%d", n))
	}
	country := []map[string]any{{"attribute": "country", "op": "in", "values": []string{"SE", "NO"}, "contextKind": "user"}}
	addRule := func(d apptest.FlagDoc, variation int) map[string]any {
		return apptest.Instr("addRule", "clauses", country, "variationId", d.VID(variation), "description", "Nordics")
	}
	ruleID := func(d apptest.FlagDoc, i int) string { return d.Prod().Rules[i].ID }

	type step = func(d apptest.FlagDoc) []map[string]any
	cases := []struct {
		name  string
		env   string // environmentKey; "-" sends none
		prep  step   // instructions run first, in the same environment
		ins   step
		check func(t *testing.T, before, after apptest.FlagDoc)
	}{
		{"turnFlagOn turns production on and leaves test off", "production", nil,
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("turnFlagOn")} },
			func(t *testing.T, b, a apptest.FlagDoc) {
				if !a.Prod().On || a.Environments["test"].On {
					t.Errorf("production %v test %v", a.Prod().On, a.Environments["test"].On)
				}
				if a.Prod().Version <= b.Prod().Version || a.Prod().LastModified == 0 {
					t.Errorf("production version %d -> %d", b.Prod().Version, a.Prod().Version)
				}
			}},
		{"turnFlagOff turns production off", "production",
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("turnFlagOn")} },
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("turnFlagOff")} },
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Prod().On {
					t.Errorf("production is on")
				}
			}},
		{"addVariation appends a variation with a new id", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addVariation", "value", "d", "name", "Dee", "description", "fourth")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				v := a.Variations[len(a.Variations)-1]
				if len(a.Variations) != 4 || v.Value != "d" || v.Name != "Dee" || v.Description != "fourth" || v.ID == "" {
					t.Errorf("variations %+v", a.Variations)
				}
			}},
		{"removeVariation removes an unused variation and renumbers the others", "-", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeVariation", "variationId", d.VID(1))}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				if len(a.Variations) != 2 || a.VID(1) != b.VID(2) || a.Defaults.OffVariation != 1 || apptest.IntOf(a.Prod().OffVariation) != 1 {
					t.Errorf("variations %+v defaults %+v", a.Variations, a.Defaults)
				}
			}},
		{"updateVariation changes a variation's value, name and description", "-", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateVariation", "variationId", d.VID(1), "value", "bee", "name", "B", "description", "second")}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				v := a.Variations[1]
				if v.Value != "bee" || v.Name != "B" || v.Description != "second" || v.ID != b.VID(1) {
					t.Errorf("variation %+v", v)
				}
			}},
		{"updateDefaultVariation picks the defaults by value", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateDefaultVariation", "onVariationValue", "b", "offVariationValue", "a")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Defaults.OnVariation != 1 || a.Defaults.OffVariation != 0 {
					t.Errorf("defaults %+v", a.Defaults)
				}
			}},
		{"addUserTargets targets user keys with a variation", "production", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u1", "u2"}, "variationId", d.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/1": "u1,u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"removeUserTargets stops targeting user keys", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u1", "u2"}, "variationId", d.VID(1))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeUserTargets", "values", []string{"u1", "absent"}, "variationId", d.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/1": "u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"addTargets targets keys of a context kind", "production", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.VID(2)),
					apptest.Instr("addTargets", "values", []string{"u9"}, "variationId", d.VID(0))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"org/2": "o1"}) {
					t.Errorf("contextTargets %v", got)
				}
				if got := apptest.TargetValues(a.Prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/0": "u9"}) {
					t.Errorf("targets %v: without a context kind, targets are users", got)
				}
			}},
		{"removeTargets stops targeting keys of a context kind", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addTargets", "contextKind", "org", "values", []string{"o1", "o2"}, "variationId", d.VID(2))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.VID(2))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"org/2": "o2"}) {
					t.Errorf("contextTargets %v", got)
				}
			}},
		{"clearUserTargets removes a variation's user targets only", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u1"}, "variationId", d.VID(1)),
					apptest.Instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.VID(1))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("clearUserTargets", "variationId", d.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if len(a.Prod().Targets) != 0 || apptest.TargetValues(a.Prod().ContextTargets)["org/1"] != "o1" {
					t.Errorf("targets %v contextTargets %v", a.Prod().Targets, a.Prod().ContextTargets)
				}
			}},
		{"clearTargets removes a variation's targets of every kind", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u1"}, "variationId", d.VID(1)),
					apptest.Instr("addTargets", "contextKind", "org", "values", []string{"o1"}, "variationId", d.VID(1))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("clearTargets", "variationId", d.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if len(a.Prod().Targets) != 0 || len(a.Prod().ContextTargets) != 0 {
					t.Errorf("targets %v contextTargets %v", a.Prod().Targets, a.Prod().ContextTargets)
				}
			}},
		{"replaceTargets replaces every target", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"old"}, "variationId", d.VID(1))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("replaceTargets", "targets", []map[string]any{
					{"contextKind": "user", "variationId": d.VID(0), "values": []string{"u1"}},
					{"contextKind": "device", "variationId": d.VID(2), "values": []string{"d1"}}})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/0": "u1"}) {
					t.Errorf("targets %v", got)
				}
				if got := apptest.TargetValues(a.Prod().ContextTargets); !reflect.DeepEqual(got, map[string]string{"device/2": "d1"}) {
					t.Errorf("contextTargets %v", got)
				}
			}},
		{"replaceUserTargets replaces the user targets", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"old"}, "variationId", d.VID(1))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("replaceUserTargets", "targets", []map[string]any{{"variationId": d.VID(2), "values": []string{"u1", "u2"}}})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if got := apptest.TargetValues(a.Prod().Targets); !reflect.DeepEqual(got, map[string]string{"user/2": "u1,u2"}) {
					t.Errorf("targets %v", got)
				}
			}},
		{"addRule adds a rule serving a variation", "production", nil,
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 1)} },
			func(t *testing.T, _, a apptest.FlagDoc) {
				rules := a.Prod().Rules
				if len(rules) != 1 || rules[0].ID == "" || apptest.IntOf(rules[0].Variation) != 1 || rules[0].Description != "Nordics" {
					t.Fatalf("rules %+v", rules)
				}
				c := rules[0].Clauses[0]
				if c.ID == "" || c.Attribute != "country" || c.Op != "in" || c.ContextKind != "user" || !reflect.DeepEqual(c.Values, []any{"SE", "NO"}) || c.Negate {
					t.Errorf("clause %+v", c)
				}
			}},
		{"addRule adds a rule serving a rollout, before another rule", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addRule", "clauses", country, "beforeRuleId", ruleID(d, 0),
					"rolloutWeights", map[string]int{d.VID(0): 25000, d.VID(2): 75000}, "rolloutBucketBy", "email", "rolloutContextKind", "user")}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				rules := a.Prod().Rules
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
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 1), addRule(d, 2)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeRule", "ruleId", ruleID(d, 0))}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				if rules := a.Prod().Rules; len(rules) != 1 || rules[0].ID != ruleID(b, 1) {
					t.Errorf("rules %+v", rules)
				}
			}},
		{"updateRuleVariationOrRollout changes what a rule serves", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateRuleVariationOrRollout", "ruleId", ruleID(d, 0), "variationId", d.VID(2))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if r := a.Prod().Rules[0]; apptest.IntOf(r.Variation) != 2 || r.Rollout != nil {
					t.Errorf("rule %+v", r)
				}
			}},
		{"updateFallthroughVariationOrRollout serves a variation by default", "production", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateFallthroughVariationOrRollout", "variationId", d.VID(2))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if apptest.IntOf(a.Prod().Fallthrough.Variation) != 2 || apptest.IntOf(a.Environments["test"].Fallthrough.Variation) != 0 {
					t.Errorf("production %+v test %+v", a.Prod().Fallthrough, a.Environments["test"].Fallthrough)
				}
			}},
		{"updateFallthroughVariationOrRollout serves a rollout by default", "production", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateFallthroughVariationOrRollout", "rolloutWeights", map[string]int{d.VID(1): 100000})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				r := a.Prod().Fallthrough.Rollout
				if a.Prod().Fallthrough.Variation != nil || r == nil || len(r.Variations) != 1 || r.Variations[0].Variation != 1 {
					t.Errorf("fallthrough %+v", a.Prod().Fallthrough)
				}
			}},
		{"updateOffVariation changes the off variation", "production", nil,
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateOffVariation", "variationId", d.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if apptest.IntOf(a.Prod().OffVariation) != 1 {
					t.Errorf("off %d", apptest.IntOf(a.Prod().OffVariation))
				}
			}},
		{"addClauses adds clauses to a rule", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addClauses", "ruleId", ruleID(d, 0), "clauses", []map[string]any{{"attribute": "age", "op": "greaterThan", "values": []int{18}, "negate": true}})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				cs := a.Prod().Rules[0].Clauses
				if len(cs) != 2 || cs[1].Attribute != "age" || !cs[1].Negate || cs[1].Values[0] != 18.0 || cs[1].ID == "" {
					t.Errorf("clauses %+v", cs)
				}
			}},
		{"removeClauses removes clauses of a rule", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addRule", "variationId", d.VID(0), "clauses", append(slices.Clone(country), map[string]any{"attribute": "age", "op": "lessThan", "values": []int{3}}))}
			},
			func(d apptest.FlagDoc) []map[string]any {
				r := d.Prod().Rules[0]
				return []map[string]any{apptest.Instr("removeClauses", "ruleId", r.ID, "clauseIds", []string{r.Clauses[0].ID})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if cs := a.Prod().Rules[0].Clauses; len(cs) != 1 || cs[0].Attribute != "age" {
					t.Errorf("clauses %+v", cs)
				}
			}},
		{"updateClause replaces a clause, keeping its id", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				r := d.Prod().Rules[0]
				return []map[string]any{apptest.Instr("updateClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID,
					"clause", map[string]any{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}})}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				c := a.Prod().Rules[0].Clauses[0]
				if c.ID != b.Prod().Rules[0].Clauses[0].ID || c.Attribute != "email" || c.Op != "endsWith" {
					t.Errorf("clause %+v", c)
				}
			}},
		{"addValuesToClause adds values to a clause", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				r := d.Prod().Rules[0]
				return []map[string]any{apptest.Instr("addValuesToClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID, "values", []string{"DK", "SE"})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if v := a.Prod().Rules[0].Clauses[0].Values; !reflect.DeepEqual(v, []any{"SE", "NO", "DK"}) {
					t.Errorf("values %v", v)
				}
			}},
		{"removeValuesFromClause removes values from a clause", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				r := d.Prod().Rules[0]
				return []map[string]any{apptest.Instr("removeValuesFromClause", "ruleId", r.ID, "clauseId", r.Clauses[0].ID, "values", []string{"SE"})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if v := a.Prod().Rules[0].Clauses[0].Values; !reflect.DeepEqual(v, []any{"NO"}) {
					t.Errorf("values %v", v)
				}
			}},
		{"reorderRules puts the rules in the order given", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0), addRule(d, 1)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("reorderRules", "ruleIds", []string{ruleID(d, 1), ruleID(d, 0)})}
			},
			func(t *testing.T, b, a apptest.FlagDoc) {
				if ruleID(a, 0) != ruleID(b, 1) || ruleID(a, 1) != ruleID(b, 0) {
					t.Errorf("rules %+v", a.Prod().Rules)
				}
			}},
		{"replaceRules replaces every rule", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0), addRule(d, 1)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("replaceRules", "rules", []map[string]any{{"variationId": d.VID(2), "description": "only", "trackEvents": true, "clauses": country}})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if rules := a.Prod().Rules; len(rules) != 1 || apptest.IntOf(rules[0].Variation) != 2 || rules[0].Description != "only" || !rules[0].TrackEvents {
					t.Errorf("rules %+v", rules)
				}
			}},
		{"updateRuleDescription describes a rule", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateRuleDescription", "ruleId", ruleID(d, 0), "description", "Scandinavia")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Prod().Rules[0].Description != "Scandinavia" {
					t.Errorf("rule %+v", a.Prod().Rules[0])
				}
			}},
		{"updateRuleTrackEvents tracks a rule's events", "production",
			func(d apptest.FlagDoc) []map[string]any { return []map[string]any{addRule(d, 0)} },
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateRuleTrackEvents", "ruleId", ruleID(d, 0), "trackEvents", true)}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !a.Prod().Rules[0].TrackEvents {
					t.Errorf("rule %+v", a.Prod().Rules[0])
				}
			}},
		{"updateTrackEvents tracks the flag's events in the environment", "production", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateTrackEvents", "trackEvents", true)}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !a.Prod().TrackEvents || a.Environments["test"].TrackEvents {
					t.Errorf("production %v test %v", a.Prod().TrackEvents, a.Environments["test"].TrackEvents)
				}
			}},
		{"addPrerequisite makes another flag a prerequisite", "production", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addPrerequisite", "key", "pre", "variationId", pre.VID(0))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if ps := a.Prod().Prerequisites; len(ps) != 1 || ps[0] != (apptest.FlagPrereq{Key: "pre", Variation: 0}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"updatePrerequisite changes the variation required", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addPrerequisite", "key", "pre", "variationId", pre.VID(0))}
			},
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updatePrerequisite", "key", "pre", "variationId", pre.VID(1))}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if ps := a.Prod().Prerequisites; len(ps) != 1 || ps[0] != (apptest.FlagPrereq{Key: "pre", Variation: 1}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"removePrerequisite removes a prerequisite", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addPrerequisite", "key", "pre", "variationId", pre.VID(0))}
			},
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removePrerequisite", "key", "pre")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if ps := a.Prod().Prerequisites; len(ps) != 0 {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"replacePrerequisites replaces every prerequisite", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addPrerequisite", "key", "pre", "variationId", pre.VID(0))}
			},
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("replacePrerequisites", "prerequisites", []map[string]any{{"key": "pre2", "variationId": pre2.VID(2)}})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if ps := a.Prod().Prerequisites; len(ps) != 1 || ps[0] != (apptest.FlagPrereq{Key: "pre2", Variation: 2}) {
					t.Errorf("prerequisites %+v", ps)
				}
			}},
		{"addTags adds tags once", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addTags", "values", []string{"x", "y", "x"})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !slices.Equal(a.Tags, []string{"x", "y"}) {
					t.Errorf("tags %v", a.Tags)
				}
			}},
		{"removeTags removes tags", "-",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addTags", "values", []string{"x", "y"})}
			},
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeTags", "values", []string{"x"})}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !slices.Equal(a.Tags, []string{"y"}) {
					t.Errorf("tags %v", a.Tags)
				}
			}},
		{"updateName renames the flag", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateName", "value", "Renamed")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Name != "Renamed" {
					t.Errorf("name %q", a.Name)
				}
			}},
		{"updateDescription describes the flag", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateDescription", "value", "What it does")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Description != "What it does" {
					t.Errorf("description %q", a.Description)
				}
			}},
		{"makeFlagPermanent and makeFlagTemporary set temporary", "-", nil,
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("makeFlagPermanent")} },
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.Temporary {
					t.Errorf("the flag is temporary")
				}
				res := apptest.SemanticPatchFlag(t, srv, "p", a.Key, apptest.SemanticBody("", apptest.Instr("makeFlagTemporary")))
				apptest.WantStatus(t, res, http.StatusOK)
				if !apptest.DecodeFlag(t, res).Temporary {
					t.Errorf("the flag is permanent")
				}
			}},
		{"turnOnClientSideAvailability and turnOffClientSideAvailability set client-side availability", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("turnOnClientSideAvailability", "value", "usingEnvironmentId"), apptest.Instr("turnOffClientSideAvailability", "value", "usingMobileKey")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !a.ClientSideAvailability.UsingEnvironmentID || a.ClientSideAvailability.UsingMobileKey {
					t.Errorf("%+v", a.ClientSideAvailability)
				}
			}},
		{"updateMaintainerMember and removeMaintainer set the maintainer", "-", nil,
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateMaintainerMember", "value", "m-1")}
			},
			func(t *testing.T, _, a apptest.FlagDoc) {
				if a.MaintainerID != "m-1" {
					t.Errorf("maintainer %q", a.MaintainerID)
				}
				res := apptest.SemanticPatchFlag(t, srv, "p", a.Key, apptest.SemanticBody("", apptest.Instr("removeMaintainer")))
				apptest.WantStatus(t, res, http.StatusOK)
				if m := apptest.DecodeFlag(t, res).MaintainerID; m != "" {
					t.Errorf("maintainer %q", m)
				}
			}},
		{"archiveFlag archives the flag in every environment", "-", nil,
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("archiveFlag")} },
			func(t *testing.T, _, a apptest.FlagDoc) {
				if !a.Archived || !a.Prod().Archived {
					t.Errorf("archived %v production %v", a.Archived, a.Prod().Archived)
				}
			}},
		{"restoreFlag restores an archived flag", "-",
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("archiveFlag")} },
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("restoreFlag")} },
			func(t *testing.T, _, a apptest.FlagDoc) {
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
				apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody(env, tc.prep(d)...)), http.StatusOK)
				d = apptest.GetFlag(t, srv, "p", d.Key)
			}
			res := apptest.SemanticPatchFlag(t, srv, "p", d.Key, map[string]any{"comment": "by instruction", "environmentKey": env, "instructions": tc.ins(d)})
			apptest.WantStatus(t, res, http.StatusOK)
			after := apptest.GetFlag(t, srv, "p", d.Key)
			if !reflect.DeepEqual(apptest.DecodeFlag(t, res), after) {
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
		ins    func(d apptest.FlagDoc) []map[string]any
		status int
		parts  []string
	}{
		{"an unknown kind is a 400 naming its index", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("turnFlagOn"), apptest.Instr("paintItBlack")}
			},
			400, []string{"instructions[1]", "paintItBlack"}},
		{"an instruction without a kind is a 400 naming its index", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("turnFlagOn"), {"values": []string{"x"}}}
			},
			400, []string{"instructions[1]", "kind"}},
		{"an environment-scoped instruction without environmentKey is a 400 naming it", "",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateName", "value", "x"), apptest.Instr("turnFlagOn")}
			},
			400, []string{"instructions[1]", "environmentKey"}},
		{"a missing parameter is a 400 naming it", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "variationId", d.VID(0))}
			},
			400, []string{"instructions[0]", "instructions[0].values"}},
		{"a missing variation id is a 400 naming it", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u"})}
			},
			400, []string{"instructions[0].variationId"}},
		{"a parameter of the wrong type is a 400 naming it", "-",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateName", "value", 5)}
			},
			400, []string{"instructions[0].value", "string"}},
		{"a rule with an unknown operator is a 400", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addRule", "variationId", d.VID(0), "clauses", []map[string]any{{"attribute": "a", "op": "like", "values": []string{"x"}}})}
			},
			400, []string{"instructions[0]", "like"}},
		{"rollout weights that do not add up to 100000 are a 400", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateFallthroughVariationOrRollout", "rolloutWeights", map[string]int{d.VID(0): 10})}
			},
			400, []string{"instructions[0].rolloutWeights", "100000"}},
		{"an unknown variation id in the middle is a 422 and nothing applies", "production",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("turnFlagOn"), apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", "nope"), apptest.Instr("addTags", "values", []string{"t"})}
			},
			422, []string{"instructions[1]", "addUserTargets", "nope"}},
		{"an unknown rule id is a 422", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateRuleVariationOrRollout", "ruleId", "ghost", "variationId", d.VID(0))}
			},
			422, []string{"instructions[0]", "ghost"}},
		{"a key targeted by another variation is a 422", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", d.VID(0)), apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", d.VID(1))}
			},
			422, []string{"instructions[1]", "already targeted"}},
		{"removing a variation still served is a 422", "-",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("removeVariation", "variationId", d.VID(0))}
			},
			422, []string{"instructions[0]", "in use"}},
		{"adding a value the flag already has is a 422", "-",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addVariation", "value", "a")}
			},
			422, []string{"instructions[0]", "unique"}},
		{"an unknown default value is a 422", "-",
			func(apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("updateDefaultVariation", "onVariationValue", "zzz")}
			},
			422, []string{"instructions[0]", "zzz"}},
		{"a prerequisite on the flag itself is a 422", "production",
			func(d apptest.FlagDoc) []map[string]any {
				return []map[string]any{apptest.Instr("addPrerequisite", "key", d.Key, "variationId", d.VID(0))}
			},
			422, []string{"instructions[0]", "own prerequisite"}},
		{"an environment that does not exist is a 404", "nowhere",
			func(apptest.FlagDoc) []map[string]any { return []map[string]any{apptest.Instr("turnFlagOn")} },
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
			apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody(env, tc.ins(d)...)), tc.status, code, tc.parts...)
			if got := apptest.GetFlag(t, srv, "p", d.Key); !reflect.DeepEqual(got, d) {
				t.Errorf("the refused patch changed the flag:\n%+v\n%+v", d, got)
			}
		})
	}

	t.Run("refused: an archived flag changes only by being restored", func(t *testing.T) {
		d := fresh(t)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody("", apptest.Instr("archiveFlag"))), 200)
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody("production", apptest.Instr("turnFlagOn"))), 422, "patch_failed", "archived")
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody("production", apptest.Instr("restoreFlag"), apptest.Instr("turnFlagOn"))), 200)
	})

	t.Run("refused: archiving a prerequisite of a live flag", func(t *testing.T) {
		a, b := fresh(t), fresh(t)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", b.Key, apptest.SemanticBody("test", apptest.Instr("addPrerequisite", "key", a.Key, "variationId", a.VID(0)))), 200)
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", a.Key, apptest.SemanticBody("", apptest.Instr("archiveFlag"))), 422, "patch_failed", "instructions[0]", b.Key)
	})

	t.Run("refused: prerequisites that would form a cycle", func(t *testing.T) {
		a, b := fresh(t), fresh(t)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", b.Key, apptest.SemanticBody("test", apptest.Instr("addPrerequisite", "key", a.Key, "variationId", a.VID(0)))), 200)
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", a.Key, apptest.SemanticBody("test", apptest.Instr("addPrerequisite", "key", b.Key, "variationId", b.VID(0)))), 422, "patch_failed", "instructions[0]", "cycle")
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
			apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, tc.body), 400, "invalid_request", tc.parts...)
		})
	}

	t.Run("a semantic patch without the Content-Type parameter is a 400", func(t *testing.T) {
		d := fresh(t)
		res := srv.Do(t, http.MethodPatch, apptest.FlagPath("p", d.Key), apptest.SemanticBody("production", apptest.Instr("turnFlagOn")), "Content-Type", "application/json")
		apptest.WantError(t, res, 400, "invalid_request", "domain-model")
		if apptest.GetFlag(t, srv, "p", d.Key).Prod().On {
			t.Errorf("the flag was turned on")
		}
	})

	t.Run("the audit entry has the comment and no delta", func(t *testing.T) {
		d := fresh(t)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", d.Key, map[string]any{"comment": "launch", "environmentKey": "production", "instructions": []any{apptest.Instr("turnFlagOn")}}), 200)
		e := apptest.LatestAuditEntry(t, srv)
		if string(e.Delta) != "null" || e.Comment != "launch" || e.Kind != "flag" || e.Access() != "updateOn proj/p:env/production:flag/"+d.Key {
			t.Errorf("entry %s %q %q delta %s", e.Kind, e.Access(), e.Comment, e.Delta)
		}
		var prev, cur apptest.FlagDoc
		_ = json.Unmarshal(e.PreviousVersion, &prev)
		_ = json.Unmarshal(e.CurrentVersion, &cur)
		if prev.Environments["production"].On || !cur.Environments["production"].On {
			t.Errorf("previous %s current %s", e.PreviousVersion, e.CurrentVersion)
		}
	})

	t.Run("concurrent semantic patches answer 200 or 409 and lose nothing", func(t *testing.T) {
		d := fresh(t)
		won := apptest.Concurrently(t, 10, func(i int) *apptest.Response {
			return apptest.SemanticPatchFlag(t, srv, "p", d.Key, apptest.SemanticBody("production", apptest.Instr("addUserTargets", "values", []string{fmt.Sprintf("user-%d", i)}, "variationId", d.VID(1))))
		})
		got := apptest.GetFlag(t, srv, "p", d.Key)
		keys := strings.Split(apptest.TargetValues(got.Prod().Targets)["user/1"], ",")
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
func abcSample() apptest.FlagDoc {
	d := apptest.FlagDoc{Variations: []apptest.FlagVariation{{ID: "a"}, {ID: "b"}, {ID: "c"}}, Environments: map[string]apptest.FlagEnv{}}
	d.Environments["production"] = apptest.FlagEnv{Rules: []apptest.FlagRule{{ID: "r0", Clauses: []apptest.FlagClause{{ID: "c0"}}}, {ID: "r1", Clauses: []apptest.FlagClause{{ID: "c1"}}}}}
	return d
}

func TestFlagAuthorization(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	_, reader := srv.MustCreateToken(t, map[string]any{"name": "r", "role": "reader"})
	apptest.CreateRole(t, srv, "flag-switcher", "", map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"updateOn"}})
	_, switcher := srv.MustCreateToken(t, map[string]any{"name": "s", "customRoleIds": []string{"flag-switcher"}})

	t.Run("a reader may read a flag but not patch it", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f")+"?expand=access", nil, "Authorization", reader)
		apptest.WantStatus(t, res, http.StatusOK)
		d := apptest.DecodeFlag(t, res)
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
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOn")), "Authorization", reader), 403, "forbidden", "updateOn")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Authorization", reader), 403, "forbidden", "updateName")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.FlagPath("p", "f"), nil, "Authorization", reader), 403, "forbidden", "deleteFlag")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "g", "name": "G"}, "Authorization", reader), 403, "forbidden", "createFlag")
	})

	t.Run("the admin's _access allows every flag action", func(t *testing.T) {
		d := apptest.GetFlag(t, srv, "p", "f")
		if d.Access == nil || len(d.Access.Denied) != 0 || len(d.Access.Allowed) == 0 {
			t.Errorf("_access %+v", d.Access)
		}
	})

	t.Run("a role allowing only updateOn may turn the flag on", func(t *testing.T) {
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOn")), "Authorization", switcher), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/test/on", true)}, "Authorization", switcher), http.StatusOK)
		d := apptest.GetFlag(t, srv, "p", "f")
		if !d.Prod().On || !d.Environments["test"].On {
			t.Errorf("production %v test %v", d.Prod().On, d.Environments["test"].On)
		}
	})

	t.Run("a role allowing only updateOn may not rename the flag, nor mix a rename into an allowed change", func(t *testing.T) {
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("", apptest.Instr("updateName", "value", "x")), "Authorization", switcher), 403, "forbidden", "updateName")
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOff"), apptest.Instr("updateName", "value", "x")), "Authorization", switcher), 403, "forbidden", "updateName")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Authorization", switcher), 403, "forbidden", "updateName")
		if d := apptest.GetFlag(t, srv, "p", "f"); d.Name != "Flag f" || !d.Prod().On {
			t.Errorf("name %q on %v", d.Name, d.Prod().On)
		}
	})

	t.Run("a malformed semantic patch is a 400 before the authorization check", func(t *testing.T) {
		apptest.WantError(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("paintItBlack")), "Authorization", switcher), 400, "invalid_request", "paintItBlack")
	})
}
