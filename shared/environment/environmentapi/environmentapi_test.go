package environmentapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

var (
	sdkKeyPattern    = regexp.MustCompile(`^sdk-` + apptest.UUIDv4 + `$`)
	mobileKeyPattern = regexp.MustCompile(`^mob-` + apptest.UUIDv4 + `$`)
)

func TestCreateEnvironment(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")

	t.Run("a create answers 201 and echoes every field it was given", func(t *testing.T) {
		body := map[string]any{
			"key": "staging", "name": "Staging", "color": "A1B2c3", "defaultTtl": 15, "secureMode": true,
			"defaultTrackEvents": true, "confirmChanges": true, "requireComments": true,
			"tags": []string{"eu", "live"}, "critical": true,
		}
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), body)
		apptest.WantStatus(t, res, http.StatusCreated)
		got := res.Map(t)
		for field, want := range body {
			if fmt.Sprint(got[field]) != fmt.Sprint(want) {
				t.Errorf("%s = %v, want %v", field, got[field], want)
			}
		}
		if id, _ := got["_id"].(string); id == "" {
			t.Errorf("no _id was generated: %s", res.Body)
		}
		if k, _ := got["apiKey"].(string); !sdkKeyPattern.MatchString(k) {
			t.Errorf("apiKey %q is not sdk-<uuid v4>", k)
		}
		if k, _ := got["mobileKey"].(string); !mobileKeyPattern.MatchString(k) {
			t.Errorf("mobileKey %q is not mob-<uuid v4>", k)
		}
		links, _ := got["_links"].(map[string]any)
		self, _ := links["self"].(map[string]any)
		if self["href"] != apptest.EnvPath("p", "staging") {
			t.Errorf("self link %v, want %s", self["href"], apptest.EnvPath("p", "staging"))
		}
		if !reflect.DeepEqual(apptest.GetEnv(t, srv, "p", "staging"), got) {
			t.Errorf("a following GET differs from the create answer:\n%v\n%v", apptest.GetEnv(t, srv, "p", "staging"), got)
		}
	})

	t.Run("a create without optional fields gets defaults and no approvals required", func(t *testing.T) {
		got := srv.MustCreateEnvironment(t, "p", "plain", nil)
		if got["defaultTtl"] != 0.0 || got["secureMode"] != false || got["critical"] != false || len(apptest.Strs(got["tags"])) != 0 {
			t.Errorf("defaults not applied: %v", got)
		}
		if _, ok := got["tags"].([]any); !ok {
			t.Errorf("tags is %v, want an empty array", got["tags"])
		}
		as, _ := got["approvalSettings"].(map[string]any)
		if as["required"] != false || as["serviceKind"] != "flagplane" {
			t.Errorf("approvalSettings %v", as)
		}
	})

	t.Run("two environments get different ids and SDK keys", func(t *testing.T) {
		a := srv.MustCreateEnvironment(t, "p", "twin-a", nil)
		b := srv.MustCreateEnvironment(t, "p", "twin-b", nil)
		for _, f := range []string{"_id", "apiKey", "mobileKey"} {
			if a[f] == b[f] {
				t.Errorf("%s is %v for both", f, a[f])
			}
		}
	})

	invalid := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"a create without a name is refused naming name", map[string]any{"key": "e", "color": "ffffff"}, []string{`"name"`}},
		{"a create without a key is refused naming key", map[string]any{"name": "E", "color": "ffffff"}, []string{`"key"`}},
		{"a create without a color is refused naming color", map[string]any{"key": "e", "name": "E"}, []string{`"color"`}},
		{"a color with a leading # is refused", map[string]any{"key": "e", "name": "E", "color": "#fffff"}, []string{"color"}},
		{"a color of seven characters with # is refused", map[string]any{"key": "e", "name": "E", "color": "#ffffff"}, []string{"color"}},
		{"a color of five characters is refused", map[string]any{"key": "e", "name": "E", "color": "fffff"}, []string{"color"}},
		{"a color of seven characters is refused", map[string]any{"key": "e", "name": "E", "color": "fffffff"}, []string{"color"}},
		{"a color that is not hexadecimal is refused", map[string]any{"key": "e", "name": "E", "color": "gggggg"}, []string{"color"}},
		{"a color of the wrong JSON type is refused naming color", map[string]any{"key": "e", "name": "E", "color": 5}, []string{`"color"`}},
		{"tags of the wrong JSON type are refused naming tags", map[string]any{"key": "e", "name": "E", "color": "ffffff", "tags": "a"}, []string{`"tags"`}},
		{"an empty name is refused", map[string]any{"key": "e", "name": " ", "color": "ffffff"}, []string{`"name"`}},
		{"a key with a space is refused", map[string]any{"key": "a b", "name": "E", "color": "ffffff"}, []string{`"key"`}},
		{"approval settings in a create are refused, pointing to the update operation",
			map[string]any{"key": "e", "name": "E", "color": "ffffff", "approvalSettings": map[string]any{"required": true}},
			[]string{"approval settings", "update operation"}},
		{"resource approval settings in a create are refused, pointing to the update operation",
			map[string]any{"key": "e", "name": "E", "color": "ffffff", "resourceApprovalSettings": map[string]any{"flag": map[string]any{"required": true}}},
			[]string{"approval settings", "update operation"}},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), tc.body)
			apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", tc.parts...)
			if res := srv.Do(t, http.MethodGet, apptest.EnvPath("p", "e"), nil); res.Status != http.StatusNotFound {
				t.Errorf("the refused environment was stored: %d %s", res.Status, res.Body)
			}
		})
	}

	t.Run("a body that is not JSON is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), `{"key":`), http.StatusBadRequest, "invalid_request")
	})

	t.Run("an empty body is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), ""), http.StatusBadRequest, "invalid_request")
	})

	t.Run("a second environment with the same key is a conflict", func(t *testing.T) {
		srv.MustCreateEnvironment(t, "p", "dup", nil)
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), map[string]any{"key": "dup", "name": "Again", "color": "000000"})
		apptest.WantError(t, res, http.StatusConflict, "conflict", "dup")
		if got := apptest.GetEnv(t, srv, "p", "dup"); got["name"] != "Environment dup" {
			t.Errorf("the existing environment was overwritten: %v", got)
		}
	})

	t.Run("the same key in another project is fine", func(t *testing.T) {
		apptest.EmptyProject(t, srv, "other")
		srv.MustCreateEnvironment(t, "p", "shared-key", nil)
		srv.MustCreateEnvironment(t, "other", "shared-key", nil)
	})

	t.Run("a create in an unknown project is not found", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("nope"), map[string]any{"key": "e", "name": "E", "color": "ffffff"})
		apptest.WantError(t, res, http.StatusNotFound, "not_found", "nope")
	})
}

func TestCreateEnvironmentFromSource(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	source := srv.MustCreateEnvironment(t, "p", "source", map[string]any{
		"defaultTtl": 30, "secureMode": true, "defaultTrackEvents": true, "requireComments": true,
		"confirmChanges": true, "tags": []string{"cloned", "eu"}, "critical": true,
	})
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "source"), []apptest.PatchOp{apptest.Replace("/approvalSettings/minNumApprovals", 2)}), http.StatusOK)
	// The source is now at version 2.

	t.Run("a source clones the settings of an existing environment", func(t *testing.T) {
		got := srv.MustCreateEnvironment(t, "p", "clone", map[string]any{"source": map[string]any{"key": "source"}})
		for _, f := range []string{"defaultTtl", "secureMode", "defaultTrackEvents", "requireComments", "confirmChanges", "tags", "critical"} {
			if !reflect.DeepEqual(got[f], source[f]) {
				t.Errorf("%s = %v, want the source's %v", f, got[f], source[f])
			}
		}
		if as, _ := got["approvalSettings"].(map[string]any); as["minNumApprovals"] != 2.0 {
			t.Errorf("approval settings not cloned: %v", got["approvalSettings"])
		}
		for _, f := range []string{"_id", "apiKey", "mobileKey", "key", "name"} {
			if got[f] == source[f] {
				t.Errorf("%s %v was copied from the source", f, got[f])
			}
		}
		if got["name"] != "Environment clone" || got["key"] != "clone" {
			t.Errorf("name/key %v/%v", got["name"], got["key"])
		}
	})

	t.Run("fields given with a source win over the source's", func(t *testing.T) {
		got := srv.MustCreateEnvironment(t, "p", "clone-own", map[string]any{
			"source": map[string]any{"key": "source"}, "defaultTtl": 5, "secureMode": false, "tags": []string{"own"}, "color": "000000",
		})
		if got["defaultTtl"] != 5.0 || got["secureMode"] != false || !slices.Equal(apptest.Strs(got["tags"]), []string{"own"}) || got["color"] != "000000" {
			t.Errorf("explicit fields lost: %v", got)
		}
		if got["requireComments"] != true || got["critical"] != true {
			t.Errorf("fields not given were not cloned: %v", got)
		}
	})

	t.Run("a source at the version given clones", func(t *testing.T) {
		srv.MustCreateEnvironment(t, "p", "clone-v2", map[string]any{"source": map[string]any{"key": "source", "version": 2}})
	})

	t.Run("a source at another version than given is a conflict", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), map[string]any{"key": "clone-v1", "name": "C", "color": "ffffff", "source": map[string]any{"key": "source", "version": 1}})
		apptest.WantError(t, res, http.StatusConflict, "optimistic_locking_error", "source")
	})

	t.Run("an unknown source is refused naming source", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), map[string]any{"key": "clone-x", "name": "C", "color": "ffffff", "source": map[string]any{"key": "missing"}})
		apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "source", "missing")
	})

	t.Run("changing the clone leaves the source alone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "clone"), []apptest.PatchOp{apptest.Add("/tags/-", "mine")}), http.StatusOK)
		if got := apptest.Strs(apptest.GetEnv(t, srv, "p", "source")["tags"]); !slices.Equal(got, []string{"cloned", "eu"}) {
			t.Errorf("source tags %v", got)
		}
	})
}

func TestListEnvironments(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "many")
	var all []string
	for i := range 25 {
		key := fmt.Sprintf("env-%02d", i)
		srv.MustCreateEnvironment(t, "many", key, nil)
		all = append(all, key)
	}
	list := func(t *testing.T, q string) *apptest.Response {
		t.Helper()
		res := srv.Do(t, http.MethodGet, apptest.EnvsPath("many")+q, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		return res
	}
	total := func(t *testing.T, res *apptest.Response) float64 {
		t.Helper()
		n, _ := res.Map(t)["totalCount"].(float64)
		return n
	}

	t.Run("a list without limit answers the first 20 and counts all 25", func(t *testing.T) {
		res := list(t, "")
		if got := apptest.ItemKeys(t, res); !slices.Equal(got, all[:20]) {
			t.Errorf("items %v, want %v", got, all[:20])
		}
		if total(t, res) != 25 {
			t.Errorf("totalCount %v, want 25", total(t, res))
		}
	})

	t.Run("limit and offset cut the window", func(t *testing.T) {
		cases := []struct {
			q    string
			want []string
		}{
			{"?limit=5", all[:5]},
			{"?limit=5&offset=5", all[5:10]},
			{"?offset=20", all[20:]},
			{"?limit=10&offset=22", all[22:]},
			{"?offset=25", nil},
			{"?offset=100", nil},
		}
		for _, c := range cases {
			res := list(t, c.q)
			if got := apptest.ItemKeys(t, res); !slices.Equal(got, c.want) {
				t.Errorf("%s: items %v, want %v", c.q, got, c.want)
			}
			if total(t, res) != 25 {
				t.Errorf("%s: totalCount %v", c.q, total(t, res))
			}
		}
	})

	t.Run("the first page links to next and last but not to first or prev", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=10"))
		for _, name := range []string{"first", "prev"} {
			if _, ok := links[name]; ok {
				t.Errorf("first page has a %s link", name)
			}
		}
		if q := apptest.Query(t, links["next"]); q.Get("offset") != "10" || q.Get("limit") != "10" {
			t.Errorf("next %q", links["next"])
		}
		if q := apptest.Query(t, links["last"]); q.Get("offset") != "20" {
			t.Errorf("last %q", links["last"])
		}
		if !strings.HasPrefix(links["self"], apptest.EnvsPath("many")) {
			t.Errorf("self %q", links["self"])
		}
	})

	t.Run("a middle page links to first, prev, next and last", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=10&offset=10"))
		want := map[string]string{"first": "0", "prev": "0", "next": "20", "last": "20", "self": "10"}
		for name, off := range want {
			href, ok := links[name]
			if !ok {
				t.Errorf("middle page has no %s link: %v", name, links)
				continue
			}
			if q := apptest.Query(t, href); q.Get("offset") != off || q.Get("limit") != "10" {
				t.Errorf("%s link %q, want offset %s", name, href, off)
			}
		}
	})

	t.Run("the last page links to first and prev but not to next or last", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=10&offset=20"))
		for _, name := range []string{"next", "last"} {
			if _, ok := links[name]; ok {
				t.Errorf("last page has a %s link", name)
			}
		}
		if q := apptest.Query(t, links["prev"]); q.Get("offset") != "10" {
			t.Errorf("prev %q", links["prev"])
		}
		if _, ok := links["first"]; !ok {
			t.Errorf("last page has no first link")
		}
	})

	t.Run("a single page has no page links", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=25"))
		if len(links) != 1 || links["self"] == "" {
			t.Errorf("links %v, want only self", links)
		}
	})

	t.Run("a page past the end links only to pages that exist", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=10&offset=100"))
		for name, href := range links {
			if name == "self" {
				continue
			}
			off, _ := strconv.Atoi(apptest.Query(t, href).Get("offset"))
			if off >= 25 {
				t.Errorf("%s link %q points past the 25 environments", name, href)
			}
		}
		if _, ok := links["first"]; !ok {
			t.Errorf("no first link: %v", links)
		}
	})

	t.Run("following next links walks every environment once", func(t *testing.T) {
		var seen []string
		href := apptest.EnvsPath("many") + "?limit=7"
		for href != "" {
			res := srv.Do(t, http.MethodGet, href, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			seen = append(seen, apptest.ItemKeys(t, res)...)
			href = apptest.LinkHrefs(t, res)["next"]
		}
		if !slices.Equal(seen, all) {
			t.Errorf("walked %v", seen)
		}
	})

	t.Run("page links keep filter and sort", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?limit=5&offset=5&filter=query:env&sort=-name"))
		for _, name := range []string{"self", "first", "prev", "next", "last"} {
			q := apptest.Query(t, links[name])
			if q.Get("filter") != "query:env" || q.Get("sort") != "-name" {
				t.Errorf("%s link %q lost filter or sort", name, links[name])
			}
		}
	})

	bad := []struct{ name, q string }{
		{"a limit of 0 is refused", "?limit=0"},
		{"a negative limit is refused", "?limit=-1"},
		{"a limit that is not an integer is refused", "?limit=ten"},
		{"an offset that is not an integer is refused", "?offset=1.5"},
		{"a negative offset is refused", "?offset=-1"},
		{"an unknown filter field is refused", "?filter=color:ffffff"},
		{"a filter entry without a colon is refused", "?filter=query"},
		{"a critical filter that is not a boolean is refused", "?filter=critical:maybe"},
		{"an unknown sort field is refused", "?sort=color"},
		{"an unknown descending sort field is refused", "?sort=-key,name"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("many")+b.q, nil), http.StatusBadRequest, "invalid_request")
		})
	}

	t.Run("the list of an unknown project is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("nope"), nil), http.StatusNotFound, "not_found", "nope")
	})

	t.Run("the list of a project without environments is empty", func(t *testing.T) {
		apptest.EmptyProject(t, srv, "none")
		res := srv.Do(t, http.MethodGet, apptest.EnvsPath("none"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t); got["totalCount"] != 0.0 || len(got["items"].([]any)) != 0 {
			t.Errorf("got %s", res.Body)
		}
	})
}

func TestFilterAndSortEnvironments(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	// Created a few milliseconds apart, so createdOn orders them as listed.
	envs := []struct {
		key, name string
		tags      []string
		critical  bool
	}{
		{"prod-eu", "Production EU", []string{"eu", "live"}, true},
		{"staging", "staging", []string{"eu"}, false},
		{"prod-us", "Production US", []string{"us", "live"}, true},
		{"qa-box", "Quality", []string{}, false},
		{"dev", "alpha developers", []string{"eu", "dev"}, false},
	}
	for _, e := range envs {
		srv.MustCreateEnvironment(t, "p", e.key, map[string]any{"name": e.name, "tags": e.tags, "critical": e.critical})
		time.Sleep(3 * time.Millisecond)
	}
	cases := []struct {
		name, q string
		want    []string
	}{
		{"a query filter matches names case-insensitively", "filter=query:PRODUCTION", []string{"prod-eu", "prod-us"}},
		{"a query filter matches keys case-insensitively", "filter=query:QA-B", []string{"qa-box"}},
		{"a query filter matches part of a name", "filter=query:develop", []string{"dev"}},
		{"a query filter that matches nothing answers no items", "filter=query:zzz", []string{}},
		{"a tags filter with one tag keeps environments with it", "filter=tags:live", []string{"prod-eu", "prod-us"}},
		{"a tags filter with an encoded plus keeps environments with both tags", "filter=tags:eu%2Blive", []string{"prod-eu"}},
		{"a tags filter with a plus sent unencoded keeps environments with both tags", "filter=tags:eu+dev", []string{"dev"}},
		{"a critical filter keeps critical environments", "filter=critical:true", []string{"prod-eu", "prod-us"}},
		{"a critical filter keeps non-critical environments", "filter=critical:false", []string{"staging", "qa-box", "dev"}},
		{"combined filters must all match", "filter=critical:false,tags:eu", []string{"staging", "dev"}},
		{"combined query and tags filters must all match", "filter=query:prod,tags:eu", []string{"prod-eu"}},
		{"sort by name is ascending and case-insensitive", "sort=name", []string{"dev", "prod-eu", "prod-us", "qa-box", "staging"}},
		{"sort by -name is descending", "sort=-name", []string{"staging", "qa-box", "prod-us", "prod-eu", "dev"}},
		{"sort by createdOn is the order of creation", "sort=createdOn", []string{"prod-eu", "staging", "prod-us", "qa-box", "dev"}},
		{"sort by -createdOn is newest first", "sort=-createdOn", []string{"dev", "qa-box", "prod-us", "staging", "prod-eu"}},
		{"sort by -critical puts critical environments first", "sort=-critical", []string{"prod-eu", "prod-us", "staging", "qa-box", "dev"}},
		{"sort by critical then -name uses both keys", "sort=critical,-name", []string{"staging", "qa-box", "dev", "prod-us", "prod-eu"}},
		{"a filter and a sort combine", "filter=tags:eu&sort=-name", []string{"staging", "prod-eu", "dev"}},
		{"a filter counts only the matching environments", "filter=tags:eu&limit=1", []string{"prod-eu"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodGet, apptest.EnvsPath("p")+"?"+c.q, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			if got := apptest.ItemKeys(t, res); !slices.Equal(got, c.want) {
				t.Errorf("items %v, want %v", got, c.want)
			}
		})
	}
	t.Run("the total counts every match, not only the page", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.EnvsPath("p")+"?filter=tags:eu&limit=1", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if n := res.Map(t)["totalCount"]; n != 3.0 {
			t.Errorf("totalCount %v, want 3", n)
		}
		if _, ok := apptest.LinkHrefs(t, res)["next"]; !ok {
			t.Errorf("no next link for a filtered list with more matches")
		}
	})
}

func TestGetEnvironment(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	created := srv.MustCreateEnvironment(t, "p", "e", nil)

	t.Run("a get answers the environment", func(t *testing.T) {
		if got := apptest.GetEnv(t, srv, "p", "e"); !reflect.DeepEqual(got, created) {
			t.Errorf("got %v, want %v", got, created)
		}
	})

	t.Run("with approvals on, approval settings of the built-in system are shown", func(t *testing.T) {
		got := apptest.GetEnv(t, srv, "p", "e")
		as, ok := got["approvalSettings"].(map[string]any)
		if !ok {
			t.Fatalf("no approvalSettings: %v", got)
		}
		want := map[string]any{
			"required": false, "bypassApprovalsForPendingChanges": false, "minNumApprovals": 1.0, "canReviewOwnRequest": false,
			"canApplyDeclinedChanges": true, "autoApplyApprovedChanges": false, "serviceKind": "flagplane",
			"serviceConfig": map[string]any{}, "requiredApprovalTags": []any{},
		}
		for k, v := range want {
			if !reflect.DeepEqual(as[k], v) {
				t.Errorf("approvalSettings.%s = %#v, want %#v", k, as[k], v)
			}
		}
	})

	t.Run("with approvals on, resource approval settings are shown, as an empty object when none are set", func(t *testing.T) {
		got := apptest.GetEnv(t, srv, "p", "e")
		if v, ok := got["resourceApprovalSettings"].(map[string]any); !ok || len(v) != 0 {
			t.Errorf("resourceApprovalSettings is %v, want {}", got["resourceApprovalSettings"])
		}
	})

	t.Run("an unknown environment is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.EnvPath("p", "nope"), nil), http.StatusNotFound, "not_found", "nope")
	})

	t.Run("an environment of an unknown project is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.EnvPath("nope", "e"), nil), http.StatusNotFound, "not_found")
	})
}

func TestEnvironmentsWithApprovalsOff(t *testing.T) {
	srv := apptest.New(t, apptest.WithoutApprovals())
	apptest.EmptyProject(t, srv, "p")
	created := srv.MustCreateEnvironment(t, "p", "e", nil)

	t.Run("no approval settings are shown by create, get or list", func(t *testing.T) {
		list := srv.Do(t, http.MethodGet, apptest.EnvsPath("p"), nil).Map(t)["items"].([]any)
		for _, env := range []map[string]any{created, apptest.GetEnv(t, srv, "p", "e"), list[0].(map[string]any)} {
			for _, f := range []string{"approvalSettings", "resourceApprovalSettings"} {
				if v, ok := env[f]; ok {
					t.Errorf("%s is shown: %v", f, v)
				}
			}
		}
	})

	t.Run("a patch of the approval settings is refused", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Replace("/approvalSettings/required", true)})
		apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "approval")
	})

	t.Run("a patch of other fields still works and shows no approval settings", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Replace("/name", "Renamed")})
		apptest.WantStatus(t, res, http.StatusOK)
		if _, ok := res.Map(t)["approvalSettings"]; ok {
			t.Errorf("patch answer shows approvalSettings: %s", res.Body)
		}
	})
}

func TestPatchEnvironment(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	srv.MustCreateEnvironment(t, "p", "e", map[string]any{"tags": []string{"a", "b"}})

	patchOK := func(t *testing.T, body any) map[string]any {
		t.Helper()
		res := srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), body)
		apptest.WantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		if stored := apptest.GetEnv(t, srv, "p", "e"); !reflect.DeepEqual(stored, got) {
			t.Errorf("a following GET differs from the patch answer:\n%v\n%v", stored, got)
		}
		return got
	}
	// refused checks a refused patch and that nothing was stored.
	refused := func(t *testing.T, body any, status int, code string, parts ...string) {
		t.Helper()
		before := apptest.GetEnv(t, srv, "p", "e")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), body), status, code, parts...)
		if after := apptest.GetEnv(t, srv, "p", "e"); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused patch changed the environment:\nbefore %v\nafter  %v", before, after)
		}
	}

	t.Run("a semantic-patch body is refused, naming JSON patch", func(t *testing.T) {
		before := apptest.GetEnv(t, srv, "p", "e")
		res := srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), `{"instructions":[{"kind":"turnFlagOn"}]}`,
			"Content-Type", "application/json; domain-model=flagplane.semanticpatch")
		apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "JSON patch")
		if after := apptest.GetEnv(t, srv, "p", "e"); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused patch changed the environment")
		}
	})

	t.Run("replace changes name, color and tags", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{apptest.Replace("/name", "New name"), apptest.Replace("/color", "00ff00"), apptest.Replace("/tags", []string{"x", "y"})})
		if got["name"] != "New name" || got["color"] != "00ff00" || !slices.Equal(apptest.Strs(got["tags"]), []string{"x", "y"}) {
			t.Errorf("got %v", got)
		}
	})

	t.Run("replace changes the other settings", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{apptest.Replace("/defaultTtl", 10), apptest.Replace("/secureMode", true), apptest.Replace("/defaultTrackEvents", true),
			apptest.Replace("/requireComments", true), apptest.Replace("/confirmChanges", true), apptest.Replace("/critical", true)})
		for f, want := range map[string]any{"defaultTtl": 10.0, "secureMode": true, "defaultTrackEvents": true, "requireComments": true, "confirmChanges": true, "critical": true} {
			if got[f] != want {
				t.Errorf("%s = %v, want %v", f, got[f], want)
			}
		}
	})

	t.Run("add at /tags/0 inserts at the beginning", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{apptest.Add("/tags/0", "first")})
		if tags := apptest.Strs(got["tags"]); !slices.Equal(tags, []string{"first", "x", "y"}) {
			t.Errorf("tags %v", tags)
		}
	})

	t.Run("add at /tags/- appends", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{apptest.Add("/tags/-", "last")})
		if tags := apptest.Strs(got["tags"]); !slices.Equal(tags, []string{"first", "x", "y", "last"}) {
			t.Errorf("tags %v", tags)
		}
	})

	t.Run("remove at /tags/1 removes one tag", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{{Op: "remove", Path: "/tags/1"}})
		if tags := apptest.Strs(got["tags"]); !slices.Equal(tags, []string{"first", "y", "last"}) {
			t.Errorf("tags %v", tags)
		}
	})

	editable := []struct {
		field string
		value any
	}{
		{"canReviewOwnRequest", true},
		{"canApplyDeclinedChanges", false},
		{"minNumApprovals", 3.0},
		{"required", true},
		{"requiredApprovalTags", []any{"needs-review"}},
	}
	for _, e := range editable {
		t.Run("the approval setting "+e.field+" can be patched", func(t *testing.T) {
			got := patchOK(t, []apptest.PatchOp{apptest.Replace("/approvalSettings/"+e.field, e.value)})
			as := got["approvalSettings"].(map[string]any)
			if !reflect.DeepEqual(as[e.field], e.value) {
				t.Errorf("%s = %v, want %v", e.field, as[e.field], e.value)
			}
		})
	}

	t.Run("a tag can be appended to the required approval tags", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{apptest.Add("/approvalSettings/requiredApprovalTags/-", "second")})
		if tags := apptest.Strs(got["approvalSettings"].(map[string]any)["requiredApprovalTags"]); !slices.Equal(tags, []string{"needs-review", "second"}) {
			t.Errorf("requiredApprovalTags %v", tags)
		}
	})

	for _, path := range []string{
		"/approvalSettings/serviceKind", "/approvalSettings/autoApplyApprovedChanges",
		"/approvalSettings/bypassApprovalsForPendingChanges", "/approvalSettings/serviceConfig",
		"/approvalSettings/serviceKindConfigurationId",
	} {
		t.Run("the approval setting "+path+" cannot be patched", func(t *testing.T) {
			refused(t, []apptest.PatchOp{apptest.Replace(path, true)}, http.StatusBadRequest, "invalid_request", path)
		})
	}

	t.Run("the approval settings cannot be replaced as a whole", func(t *testing.T) {
		refused(t, []apptest.PatchOp{apptest.Replace("/approvalSettings", map[string]any{"required": true})}, http.StatusBadRequest, "invalid_request", "/approvalSettings")
	})

	t.Run("the resource approval settings cannot be patched", func(t *testing.T) {
		refused(t, []apptest.PatchOp{apptest.Add("/resourceApprovalSettings/flag", map[string]any{"required": true})}, http.StatusBadRequest, "invalid_request")
	})

	t.Run("required and requiredApprovalTags in one request are refused and nothing is stored", func(t *testing.T) {
		refused(t, []apptest.PatchOp{apptest.Replace("/approvalSettings/required", false), apptest.Replace("/approvalSettings/requiredApprovalTags", []string{"t"})},
			http.StatusBadRequest, "invalid_request", "required", "requiredApprovalTags")
	})

	t.Run("required and a tag appended in one request are refused too", func(t *testing.T) {
		refused(t, []apptest.PatchOp{apptest.Replace("/approvalSettings/required", false), apptest.Add("/approvalSettings/requiredApprovalTags/-", "t")},
			http.StatusBadRequest, "invalid_request", "required", "requiredApprovalTags")
	})

	for _, path := range []string{"/_id", "/key", "/apiKey", "/mobileKey", "/projectKey", "/createdOn", "/_links", "/unknownField"} {
		t.Run("the field "+path+" cannot be patched", func(t *testing.T) {
			refused(t, []apptest.PatchOp{apptest.Replace(path, "x")}, http.StatusBadRequest, "invalid_request", path)
		})
	}

	t.Run("a read-only field cannot be moved into an editable one", func(t *testing.T) {
		refused(t, []apptest.PatchOp{{Op: "move", From: "/apiKey", Path: "/name"}}, http.StatusBadRequest, "invalid_request", "/apiKey")
	})

	invalidResults := []struct {
		name string
		ops  []apptest.PatchOp
		part string
	}{
		{"a color with a leading # is refused", []apptest.PatchOp{apptest.Replace("/color", "#00ff00")}, "color"},
		{"a color of five characters is refused", []apptest.PatchOp{apptest.Replace("/color", "00ff0")}, "color"},
		{"an empty name is refused", []apptest.PatchOp{apptest.Replace("/name", "")}, "name"},
		{"a removed name is refused", []apptest.PatchOp{{Op: "remove", Path: "/name"}}, "name"},
		{"minNumApprovals 0 is refused", []apptest.PatchOp{apptest.Replace("/approvalSettings/minNumApprovals", 0)}, "minNumApprovals"},
		{"a duplicate tag is refused", []apptest.PatchOp{apptest.Add("/tags/-", "first")}, "tags"},
		{"a negative defaultTtl is refused", []apptest.PatchOp{apptest.Replace("/defaultTtl", -1)}, "defaultTtl"},
		{"a color of the wrong JSON type is refused naming color", []apptest.PatchOp{apptest.Replace("/color", 5)}, "color"},
		{"a valid operation does not save an invalid one in the same request", []apptest.PatchOp{apptest.Replace("/name", "Fine"), apptest.Replace("/color", "nope")}, "color"},
	}
	for _, c := range invalidResults {
		t.Run(c.name+" and nothing is stored", func(t *testing.T) {
			refused(t, c.ops, http.StatusBadRequest, "invalid_request", c.part)
		})
	}

	t.Run("a failing test operation answers 422 patch_failed and nothing is stored", func(t *testing.T) {
		refused(t, []apptest.PatchOp{{Op: "test", Path: "/name", Value: "not the name"}, apptest.Replace("/name", "Tested")}, http.StatusUnprocessableEntity, "patch_failed")
	})

	t.Run("a passing test operation lets the patch apply", func(t *testing.T) {
		got := patchOK(t, []apptest.PatchOp{{Op: "test", Path: "/key", Value: "e"}, apptest.Replace("/name", "Tested")})
		if got["name"] != "Tested" {
			t.Errorf("name %v", got["name"])
		}
	})

	t.Run("replacing a missing array element answers 422 patch_failed", func(t *testing.T) {
		refused(t, []apptest.PatchOp{apptest.Replace("/tags/99", "x")}, http.StatusUnprocessableEntity, "patch_failed")
	})

	t.Run("a patch that changes nothing answers the environment unchanged", func(t *testing.T) {
		before := apptest.GetEnv(t, srv, "p", "e")
		got := patchOK(t, []apptest.PatchOp{apptest.Replace("/name", before["name"])})
		if !reflect.DeepEqual(before, got) {
			t.Errorf("got %v", got)
		}
	})

	t.Run("the comment form applies its patch", func(t *testing.T) {
		got := patchOK(t, map[string]any{"comment": "rename for the audit", "patch": []apptest.PatchOp{apptest.Replace("/name", "Commented")}})
		if got["name"] != "Commented" {
			t.Errorf("name %v", got["name"])
		}
	})

	notPatches := []struct{ name, body string }{
		{"an object without patch", `{"name": "x"}`},
		{"a string", `"replace"`},
		{"an empty array", `[]`},
		{"invalid JSON", `[{"op":`},
		{"an unknown op", `[{"op": "frobnicate", "path": "/name", "value": "x"}]`},
		{"a path without a leading slash", `[{"op": "replace", "path": "name", "value": "x"}]`},
		{"a replace without a value", `[{"op": "replace", "path": "/name"}]`},
		{"an array of strings", `["replace"]`},
		{"an empty body", ``},
	}
	for _, c := range notPatches {
		t.Run("a body that is "+c.name+" is refused", func(t *testing.T) {
			refused(t, c.body, http.StatusBadRequest, "invalid_request")
		})
	}

	t.Run("a patch of an unknown environment is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "nope"), []apptest.PatchOp{apptest.Replace("/name", "x")}), http.StatusNotFound, "not_found")
	})
}

func TestConcurrentEnvironmentPatches(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	srv.MustCreateEnvironment(t, "p", "e", nil)

	t.Run("concurrent patches either apply or answer 409, and no applied change is lost", func(t *testing.T) {
		const n = 20
		statuses := make([]int, n)
		codes := make([]string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res := srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Add("/tags/-", fmt.Sprintf("tag-%02d", i))})
				statuses[i] = res.Status
				if res.Status != http.StatusOK {
					var body struct{ Code string }
					res.JSON(t, &body)
					codes[i] = body.Code
				}
			}()
		}
		close(start)
		wg.Wait()
		var applied []string
		for i, s := range statuses {
			switch {
			case s == http.StatusOK:
				applied = append(applied, fmt.Sprintf("tag-%02d", i))
			case s == http.StatusConflict && codes[i] == "optimistic_locking_error":
			default:
				t.Errorf("patch %d answered %d %q", i, s, codes[i])
			}
		}
		if len(applied) == 0 {
			t.Fatalf("no patch applied")
		}
		got := apptest.Strs(apptest.GetEnv(t, srv, "p", "e")["tags"])
		sort.Strings(got)
		if !slices.Equal(got, applied) {
			t.Errorf("stored tags %v, want exactly the applied %v", got, applied)
		}
		t.Logf("%d of %d concurrent patches applied", len(applied), n)
	})
}

func TestDeleteEnvironment(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	srv.MustCreateEnvironment(t, "p", "e", nil)
	srv.MustCreateEnvironment(t, "p", "keep", nil)

	t.Run("a delete answers 204 with no body", func(t *testing.T) {
		res := srv.Do(t, http.MethodDelete, apptest.EnvPath("p", "e"), nil)
		apptest.WantStatus(t, res, http.StatusNoContent)
		if len(res.Body) != 0 {
			t.Errorf("body %q", res.Body)
		}
	})

	t.Run("a deleted environment is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.EnvPath("p", "e"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a deleted environment is gone from the list and the others stay", func(t *testing.T) {
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("p"), nil)); !slices.Equal(got, []string{"keep"}) {
			t.Errorf("items %v", got)
		}
	})

	t.Run("deleting it again is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.EnvPath("p", "e"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("the key can be used again, with new SDK keys", func(t *testing.T) {
		again := srv.MustCreateEnvironment(t, "p", "e", map[string]any{"name": "Again"})
		if again["name"] != "Again" {
			t.Errorf("got %v", again)
		}
	})
}

func TestConcurrentEnvironmentCreates(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")

	t.Run("of concurrent creates with one key exactly one succeeds and the others conflict", func(t *testing.T) {
		const n = 10
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), map[string]any{"key": "race", "name": fmt.Sprintf("Racer %d", i), "color": "ffffff"})
				statuses[i] = res.Status
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		for i, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Errorf("create %d answered %d", i, s)
			}
		}
		if created != 1 {
			t.Errorf("%d creates succeeded, want 1", created)
		}
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("p"), nil)); !slices.Equal(got, []string{"race"}) {
			t.Errorf("environments %v", got)
		}
	})
}

func TestResetEnvironmentKeys(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	srv.MustCreateEnvironment(t, "p", "e", nil)

	cases := []struct {
		name    string
		path    string
		field   string
		other   string
		pattern *regexp.Regexp
	}{
		{"resetting the SDK key replaces only the SDK key", "/apiKey", "apiKey", "mobileKey", sdkKeyPattern},
		{"resetting the mobile key replaces only the mobile key", "/mobileKey", "mobileKey", "apiKey", mobileKeyPattern},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := apptest.GetEnv(t, srv, "p", "e")
			res := srv.Do(t, http.MethodPost, apptest.EnvPath("p", "e")+tc.path, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			got := res.Map(t)
			if got[tc.field] == before[tc.field] || !tc.pattern.MatchString(got[tc.field].(string)) {
				t.Fatalf("%s went from %v to %v", tc.field, before[tc.field], got[tc.field])
			}
			if got[tc.other] != before[tc.other] {
				t.Fatalf("%s changed too", tc.other)
			}
			if stored := apptest.GetEnv(t, srv, "p", "e"); stored[tc.field] != got[tc.field] {
				t.Fatalf("a following GET shows %v, not the new key", stored[tc.field])
			}
		})
	}
	t.Run("an expiry for the old key is refused and nothing changes", func(t *testing.T) {
		before := apptest.GetEnv(t, srv, "p", "e")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.EnvPath("p", "e")+"/apiKey?expiry=4102444800000", nil), http.StatusBadRequest, "invalid_request", "expiry")
		if after := apptest.GetEnv(t, srv, "p", "e"); after["apiKey"] != before["apiKey"] {
			t.Fatal("the key changed")
		}
	})
	t.Run("no audit entry holds an SDK or mobile key", func(t *testing.T) {
		env := apptest.GetEnv(t, srv, "p", "e")
		list := srv.Do(t, http.MethodGet, "/api/v2/auditlog?limit=20", nil)
		apptest.WantStatus(t, list, http.StatusOK)
		var page struct {
			Items []struct {
				ID string `json:"_id"`
			}
		}
		list.JSON(t, &page)
		for _, it := range page.Items {
			detail := srv.Do(t, http.MethodGet, "/api/v2/auditlog/"+it.ID, nil).String()
			for _, secret := range []string{"sdk-", "mob-", env["apiKey"].(string)} {
				if strings.Contains(detail, secret) {
					t.Fatalf("audit entry %s holds %q", it.ID, secret)
				}
			}
		}
	})
}
