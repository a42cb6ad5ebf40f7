package flagimportapi_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// segmentDoc is the part of a flagplane segment an import sets.
type segmentDoc struct {
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Version     int      `json:"version"`
	Rules       []struct {
		Clauses []struct {
			Attribute string `json:"attribute"`
			Op        string `json:"op"`
			Values    []any  `json:"values"`
			Negate    bool   `json:"negate"`
		} `json:"clauses"`
	} `json:"rules"`
	Included []string `json:"included"`
	Excluded []string `json:"excluded"`
}

func segmentPath(project, env, key string) string {
	return apptest.API + "/segments/" + project + "/" + env + "/" + key
}

func getSegment(tb testing.TB, srv *apptest.Server, project, env, key string) segmentDoc {
	tb.Helper()
	var s segmentDoc
	must(tb, srv, http.StatusOK, http.MethodGet, segmentPath(project, env, key), nil).JSON(tb, &s)
	return s
}

// segmentKeys are the keys of an environment's segments.
func segmentKeys(tb testing.TB, srv *apptest.Server, project, env string) []string {
	tb.Helper()
	return apptest.ItemKeys(tb, must(tb, srv, http.StatusOK, http.MethodGet, apptest.API+"/segments/"+project+"/"+env, nil))
}

// unleashSegment creates a segment in Unleash and returns its id.
func (u unleash) segment(t *testing.T, name string, constraints ...map[string]any) int {
	t.Helper()
	var out struct {
		ID int `json:"id"`
	}
	u.call(t, http.MethodPost, "/api/admin/segments", map[string]any{"name": name, "description": "segment " + name, "constraints": constraints}, &out)
	if out.ID == 0 {
		t.Fatalf("Unleash answered no id for segment %s", name)
	}
	return out.ID
}

func TestImportOfFeaturesWithSegmentsFromARealUnleashServer(t *testing.T) {
	u := unleashServer(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	sfx := hex.EncodeToString(b) // Unleash keeps its features and segments across tests of one run
	feature := "segmented-" + sfx
	nordics := u.segment(t, "nordics-"+sfx, map[string]any{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE"}})
	staff := u.segment(t, "staff-"+sfx, map[string]any{"contextName": "email", "operator": "STR_ENDS_WITH", "values": []string{"@example.com"}},
		map[string]any{"contextName": "age", "operator": "NUM_GTE", "value": "18"})
	vip := u.segment(t, "vip-"+sfx, map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"alice", "zoe"}})

	u.feature(t, feature, "release", "Behind segments")
	// Production: Nordic staff who are not on the free plan, or a VIP.
	u.strategy(t, feature, "production", map[string]any{"name": "flexibleRollout", "segments": []int{nordics, staff},
		"parameters":  map[string]any{"rollout": "100", "stickiness": "default", "groupId": feature},
		"constraints": []any{map[string]any{"contextName": "plan", "operator": "NOT_IN", "values": []string{"free"}}}})
	u.strategy(t, feature, "production", map[string]any{"name": "default", "segments": []int{vip}})
	u.enable(t, feature, "production")
	// Development: anyone in the Nordics.
	u.strategy(t, feature, "development", map[string]any{"name": "default", "segments": []int{nordics}})
	u.enable(t, feature, "development")

	dst := apptest.New(t, apptest.WithWebhookDelivery()) // loopback sources allowed
	dst.MustCreateProject(t, "dst")
	c := createConfig(t, dst, "dst", "unleash", map[string]any{"name": "Unleash", "config": map[string]any{
		"baseUrl": u.url, "apiToken": u.token, "ldTag": "from-unleash",
		"environmentMap": map[string]string{"production": "production", "development": "test"}}})
	got := trigger(t, dst, c)
	key := func(id int) string { return fmt.Sprintf("unleash-segment-%d", id) }

	t.Run("the feature is imported, with no error about it or its segments", func(t *testing.T) {
		for _, e := range got.Status.Errors {
			if strings.Contains(e.Message, feature) || strings.Contains(e.Message, "segment") {
				t.Errorf("unexpected error %+v", e)
			}
		}
		getFlag(t, dst, "dst", feature)
	})
	t.Run("each segment the feature uses is a segment of each environment using it, keyed by its Unleash id, its constraints a rule", func(t *testing.T) {
		prod, test := segmentKeys(t, dst, "dst", "production"), segmentKeys(t, dst, "dst", "test")
		for _, want := range []string{key(nordics), key(staff), key(vip)} {
			if !slices.Contains(prod, want) {
				t.Errorf("production has segments %v, not %s", prod, want)
			}
		}
		if !slices.Contains(test, key(nordics)) || slices.Contains(test, key(staff)) || slices.Contains(test, key(vip)) {
			t.Errorf("test has segments %v, want %s and not the others (which are not used there)", test, key(nordics))
		}
		s := getSegment(t, dst, "dst", "production", key(staff))
		if s.Name != "staff-"+sfx || s.Description != "segment staff-"+sfx || strings.Join(s.Tags, ",") != "from-unleash" ||
			len(s.Rules) != 1 || len(s.Rules[0].Clauses) != 2 || s.Rules[0].Clauses[0].Op != "endsWith" || s.Rules[0].Clauses[1].Op != "greaterThanOrEqual" {
			t.Errorf("segment %+v", s)
		}
	})
	contexts := []map[string]any{
		{"userId": "bob", "properties": map[string]any{"country": "NO", "email": "bob@example.com", "age": "30", "plan": "pro"}},   // in both, not free
		{"userId": "bob", "properties": map[string]any{"country": "NO", "email": "bob@example.com", "age": "30", "plan": "free"}},  // in both, free
		{"userId": "carl", "properties": map[string]any{"country": "DE", "email": "carl@example.com", "age": "30", "plan": "pro"}}, // not Nordic
		{"userId": "dina", "properties": map[string]any{"country": "SE", "email": "dina@example.com", "age": "16", "plan": "pro"}}, // too young for staff
		{"userId": "eve", "properties": map[string]any{"country": "SE", "email": "eve@elsewhere.org", "age": "40", "plan": "pro"}}, // not staff
		{"userId": "alice", "properties": map[string]any{"country": "DE"}},                                                         // a VIP
	}
	sameAsUnleash := func(t *testing.T) {
		t.Helper()
		served := map[bool]int{}
		for _, env := range [][2]string{{"production", "production"}, {"development", "test"}} {
			for _, cx := range contexts {
				cx["appName"] = "flagplane-test"
				fp := map[string]any{"kind": "user", "key": cx["userId"]}
				for k, v := range cx["properties"].(map[string]any) {
					fp[k] = v
					if k == "age" { // Unleash's properties are strings; flagplane compares numbers
						n, err := strconv.ParseFloat(v.(string), 64)
						if err != nil {
							t.Fatal(err)
						}
						fp[k] = n
					}
				}
				want := u.enabled(t, feature, env[0], cx)
				served[want]++
				if got := evaluate(t, dst, "dst", env[1], feature, fp); got != want {
					t.Errorf("%s in %s for %v: flagplane serves %v, Unleash %v", feature, env[1], fp, got, want)
				}
			}
		}
		if served[true] == 0 || served[false] == 0 {
			t.Errorf("the contexts got %v from Unleash: the comparison needs both answers", served)
		}
	}
	t.Run("flagplane serves what Unleash's playground answers, for contexts inside and outside the segments", sameAsUnleash)
	t.Run("a rerun changes neither the flag nor its segments", func(t *testing.T) {
		flagVersion := getFlag(t, dst, "dst", feature).Version
		versions := map[int]int{}
		for _, id := range []int{nordics, staff, vip} {
			versions[id] = getSegment(t, dst, "dst", "production", key(id)).Version
		}
		trigger(t, dst, c)
		if v := getFlag(t, dst, "dst", feature).Version; v != flagVersion {
			t.Errorf("flag at version %d after the rerun, want %d", v, flagVersion)
		}
		for id, v := range versions {
			if got := getSegment(t, dst, "dst", "production", key(id)).Version; got != v {
				t.Errorf("segment %s at version %d after the rerun, want %d", key(id), got, v)
			}
		}
	})
	t.Run("a segment changed in Unleash is updated by the next run, never duplicated, and flagplane still serves what Unleash does", func(t *testing.T) {
		before := segmentKeys(t, dst, "dst", "production")
		v := getSegment(t, dst, "dst", "production", key(nordics)).Version
		u.call(t, http.MethodPut, fmt.Sprintf("/api/admin/segments/%d", nordics), map[string]any{"name": "nordics-" + sfx, "description": "segment nordics-" + sfx,
			"constraints": []any{map[string]any{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE", "DE"}}}}, nil)
		trigger(t, dst, c)
		if after := segmentKeys(t, dst, "dst", "production"); strings.Join(after, ",") != strings.Join(before, ",") {
			t.Errorf("segments %v after the rerun, were %v", after, before)
		}
		s := getSegment(t, dst, "dst", "production", key(nordics))
		if s.Version != v+1 || len(s.Rules) != 1 || len(s.Rules[0].Clauses) != 1 || len(s.Rules[0].Clauses[0].Values) != 3 {
			t.Errorf("segment %+v, want version %d with DE added", s, v+1)
		}
		sameAsUnleash(t)
	})
}

func TestImportFromALaunchDarklyCompatibleAPIBringsTheSegmentsItsRulesMatch(t *testing.T) {
	src := apptest.New(t)
	src.MustCreateProject(t, "src") // environments test and production
	seed := func(method, path string, body any) {
		t.Helper()
		if res := src.Do(t, method, path, body); res.Status/100 != 2 {
			t.Fatalf("seed %s %s: %d %s", method, path, res.Status, res.Body)
		}
	}
	clause := func(id, attr, op string, values ...any) map[string]any {
		return map[string]any{"_id": id, "attribute": attr, "op": op, "values": values}
	}
	rule := func(id string, clauses ...map[string]any) map[string]any {
		return map[string]any{"_id": id, "clauses": clauses}
	}
	segmentsOf := apptest.API + "/segments/src/"
	// production: "staff" lists keys and matches an email domain; "insiders"
	// holds staff (by segmentMatch) and one more key; "huge" is a big segment.
	seed(http.MethodPost, segmentsOf+"production", map[string]any{"key": "staff", "name": "Staff", "description": "Our people", "tags": []string{"people"}})
	seed(http.MethodPatch, segmentsOf+"production/staff", []map[string]any{
		{"op": "replace", "path": "/included", "value": []string{"ann"}},
		{"op": "replace", "path": "/excluded", "value": []string{"ex@example.com"}},
		{"op": "replace", "path": "/rules", "value": []any{rule("r-staff", clause("c-staff", "email", "endsWith", "@example.com"))}},
	})
	seed(http.MethodPost, segmentsOf+"production", map[string]any{"key": "insiders", "name": "Insiders"})
	seed(http.MethodPatch, segmentsOf+"production/insiders", []map[string]any{
		{"op": "replace", "path": "/included", "value": []string{"pat"}},
		{"op": "replace", "path": "/rules", "value": []any{rule("r-ins", clause("c-ins", "", "segmentMatch", "staff"))}},
	})
	seed(http.MethodPost, segmentsOf+"production", map[string]any{"key": "huge", "name": "Huge", "unbounded": true})
	// test: a "staff" of its own, listing other keys.
	seed(http.MethodPost, segmentsOf+"test", map[string]any{"key": "staff", "name": "Staff (test)"})
	seed(http.MethodPatch, segmentsOf+"test/staff", []map[string]any{{"op": "replace", "path": "/included", "value": []string{"tess"}}})

	seed(http.MethodPost, "/api/v2/flags/src", map[string]any{"key": "preview", "name": "Preview"})
	seed(http.MethodPatch, "/api/v2/flags/src/preview", []map[string]any{
		{"op": "replace", "path": "/environments/production/on", "value": true},
		{"op": "replace", "path": "/environments/production/rules", "value": []any{
			map[string]any{"clauses": []any{map[string]any{"attribute": "", "op": "segmentMatch", "values": []string{"insiders"}}}, "variation": 0}}},
		{"op": "replace", "path": "/environments/production/fallthrough", "value": map[string]any{"variation": 1}},
		{"op": "replace", "path": "/environments/test/on", "value": true},
		{"op": "replace", "path": "/environments/test/rules", "value": []any{
			map[string]any{"clauses": []any{map[string]any{"attribute": "", "op": "segmentMatch", "values": []string{"staff"}}}, "variation": 0}}},
		{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 1}},
	})
	seed(http.MethodPost, "/api/v2/flags/src", map[string]any{"key": "mass", "name": "Mass"})
	seed(http.MethodPatch, "/api/v2/flags/src/mass", []map[string]any{
		{"op": "replace", "path": "/environments/production/rules", "value": []any{
			map[string]any{"clauses": []any{map[string]any{"attribute": "", "op": "segmentMatch", "values": []string{"huge"}}}, "variation": 0}}},
	})

	dst := apptest.New(t, apptest.WithWebhookDelivery()) // loopback sources allowed
	dst.MustCreateProject(t, "dst")
	c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"name": "From the old account",
		"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src", "ldTag": "imported"}})
	got := trigger(t, dst, c)

	t.Run("the flag matching a big segment is left out, saying why, and the others are imported", func(t *testing.T) {
		if got.Status.Status != "partial" || len(got.Status.Errors) != 1 {
			t.Fatalf("_status %+v, want partial with one error", got.Status)
		}
		if e := got.Status.Errors[0]; !strings.Contains(e.Message, `flag "mass"`) || !strings.Contains(e.Message, `segment "huge"`) || !strings.Contains(e.Message, "big segment") {
			t.Errorf("error %+v, want it to name flag mass, segment huge and why", e)
		}
		if keys := flagKeys(t, dst, "dst"); strings.Join(keys, ",") != "preview" {
			t.Errorf("flags %v, want preview only", keys)
		}
	})
	t.Run("the segments the rules match come along, those they match in turn too, each in its environment as the source has it", func(t *testing.T) {
		if keys := segmentKeys(t, dst, "dst", "production"); strings.Join(keys, ",") != "insiders,staff" {
			t.Errorf("production segments %v, want insiders and staff (not huge)", keys)
		}
		if keys := segmentKeys(t, dst, "dst", "test"); strings.Join(keys, ",") != "staff" {
			t.Errorf("test segments %v, want staff", keys)
		}
		for _, env := range []string{"production", "test"} {
			for _, key := range segmentKeys(t, dst, "dst", env) {
				want, got := getSegment(t, src, "src", env, key), getSegment(t, dst, "dst", env, key)
				want.Tags = append(want.Tags, "imported")
				slices.Sort(want.Tags)
				want.Version = got.Version
				if a, b := jsonOf(t, want), jsonOf(t, got); a != b {
					t.Errorf("segment %s of %s\n got %s\nwant %s", key, env, b, a)
				}
			}
		}
	})
	t.Run("the flag serves what the source serves, inside and outside its segments", func(t *testing.T) {
		served := map[bool]int{}
		for _, env := range []string{"production", "test"} {
			for _, cx := range []map[string]any{
				{"kind": "user", "key": "ann"}, {"kind": "user", "key": "pat"}, {"kind": "user", "key": "tess"},
				{"kind": "user", "key": "joe", "email": "joe@example.com"}, {"kind": "user", "key": "ex@example.com", "email": "ex@example.com"},
				{"kind": "user", "key": "zed", "email": "zed@elsewhere.org"},
			} {
				want := evaluate(t, src, "src", env, "preview", cx)
				served[want]++
				if got := evaluate(t, dst, "dst", env, "preview", cx); got != want {
					t.Errorf("preview in %s for %v: %v, the source serves %v", env, cx, got, want)
				}
			}
		}
		if served[true] == 0 || served[false] == 0 {
			t.Errorf("the source served %v: the comparison needs both answers", served)
		}
	})
	t.Run("a rerun changes no segment", func(t *testing.T) {
		before := map[string]int{}
		for _, key := range []string{"insiders", "staff"} {
			before[key] = getSegment(t, dst, "dst", "production", key).Version
		}
		trigger(t, dst, c)
		for key, v := range before {
			if got := getSegment(t, dst, "dst", "production", key).Version; got != v {
				t.Errorf("segment %s at version %d after the rerun, want %d", key, got, v)
			}
		}
	})
}
