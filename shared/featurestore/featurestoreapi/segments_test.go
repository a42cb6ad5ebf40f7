package featurestoreapi_test

// Segments in feature stores: LaunchDarkly's Go SDK in daemon mode reads
// the segments flagplane wrote beside the flags (the SDKs' segments kind)
// and evaluates flags matching them as flagplane's evaluate operation
// does, before and after a segment changes, and a deleted segment leaves
// the store.

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// patchSegment replaces fields of a segment of fs/test by JSON patch,
// creating it first when create is set, through the API.
func patchSegment(tb testing.TB, srv *apptest.Server, key string, create bool, fields map[string]any) {
	tb.Helper()
	if create {
		mustOK(tb, beta(tb, srv, http.MethodPost, "/api/v2/segments/fs/test", map[string]any{"key": key, "name": key}), http.StatusCreated)
	}
	var ops []map[string]any
	for path, v := range fields {
		ops = append(ops, map[string]any{"op": "replace", "path": "/" + path, "value": v})
	}
	mustOK(tb, beta(tb, srv, http.MethodPatch, "/api/v2/segments/fs/test/"+key, ops), http.StatusOK)
}

// segmentFlags makes project fs with segments of listed keys by kind,
// rules, a weighted rule by org and a nested segment, and flags matching
// them (one negated).
func segmentFlags(tb testing.TB, srv *apptest.Server) {
	tb.Helper()
	srv.MustCreateProject(tb, "fs")
	orgPlan := map[string]any{"contextKind": "org", "attribute": "plan", "op": "in", "values": []string{"enterprise"}}
	patchSegment(tb, srv, "listed", true, map[string]any{
		"included":         []string{"user-1", "user-2"},
		"excluded":         []string{"user-3"},
		"includedContexts": []map[string]any{{"contextKind": "org", "values": []string{"org-1"}}},
		"rules":            []map[string]any{{"_id": "r1", "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@corp.example"}}}}},
	})
	patchSegment(tb, srv, "orgs", true, map[string]any{
		"rules": []map[string]any{{"_id": "r1", "clauses": []map[string]any{orgPlan}, "weight": 60000, "rolloutContextKind": "org"}},
	})
	patchSegment(tb, srv, "nested", true, map[string]any{
		"rules": []map[string]any{{"_id": "r1", "clauses": []map[string]any{
			{"attribute": "", "op": "segmentMatch", "values": []string{"listed"}},
			{"attribute": "country", "op": "in", "values": []string{"de"}}}}},
	})
	for i, f := range []struct {
		segs   []string
		negate bool
	}{{[]string{"listed"}, false}, {[]string{"orgs", "nested"}, false}, {[]string{"nested"}, true}} {
		key := fmt.Sprintf("seg-flag-%d", i)
		mustOK(tb, beta(tb, srv, http.MethodPost, "/api/v2/flags/fs", map[string]any{"key": key, "name": key,
			"variations": []map[string]any{{"value": "in"}, {"value": "out"}}}), http.StatusCreated)
		mustOK(tb, beta(tb, srv, http.MethodPatch, "/api/v2/flags/fs/"+key, []map[string]any{
			{"op": "replace", "path": "/environments/test/on", "value": true},
			{"op": "replace", "path": "/environments/test/rules", "value": []map[string]any{
				{"clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": f.segs, "negate": f.negate}}, "variation": 0}}},
			{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 1}},
		}), http.StatusOK)
	}
}

// segmentContexts are users alone and with orgs of either plan.
func segmentContexts() []ldcontext.Context {
	out := contexts()
	for i := 0; i < 10; i++ {
		org := ldcontext.NewBuilder(fmt.Sprintf("org-%d", i)).Kind("org").SetString("plan", []string{"free", "enterprise"}[i%2]).Build()
		out = append(out, org, ldcontext.NewMulti(contexts()[i], org))
	}
	return out
}

func TestTheSDKInDaemonModeMatchesSegments(t *testing.T) {
	for _, k := range []storeKind{redisKind(), dynamoKind()} {
		t.Run(k.name, func(t *testing.T) {
			srv := apptest.New(t, apptest.WithWebhookDelivery())
			segmentFlags(t, srv)
			config := k.config(t, "p"+uuid.NewString()[:8])
			base := "/api/v2/integration-capabilities/featureStore/fs/test/" + k.name
			var created struct {
				ID string `json:"_id"`
			}
			mustOK(t, beta(t, srv, http.MethodPost, base, map[string]any{"name": "daemon", "on": true, "config": config}), http.StatusCreated).JSON(t, &created)
			client := daemonClient(t, k, config)
			serves := func(flagKey string, c ldcontext.Context, want string) func() []string {
				return func() []string {
					if got, _ := client.StringVariation(flagKey, c, ""); got != want {
						return []string{fmt.Sprintf("%s serves %q to %s, want %q", flagKey, got, c.FullyQualifiedKey(), want)}
					}
					return mismatches(t, srv, client, segmentContexts()...)
				}
			}
			status := func() (items int) {
				var rep struct {
					Status struct {
						Items int `json:"items"`
					} `json:"_status"`
				}
				mustOK(t, beta(t, srv, http.MethodGet, base+"/"+created.ID, nil), http.StatusOK).JSON(t, &rep)
				return rep.Status.Items
			}

			t.Run("flags matching segments evaluate as flagplane evaluates them", func(t *testing.T) {
				eventually(t, "user-1 in listed", serves("seg-flag-0", ldcontext.New("user-1"), "in"))
				if n := status(); n != 6 {
					t.Fatalf("the status counts %d items, want 3 flags and 3 segments", n)
				}
			})
			t.Run("a segment change reaches the store", func(t *testing.T) {
				patchSegment(t, srv, "listed", false, map[string]any{"included": []string{"user-1", "user-2", "user-7"}})
				eventually(t, "user-7 in listed", serves("seg-flag-0", ldcontext.New("user-7"), "in"))
			})
			t.Run("a deleted segment leaves the store", func(t *testing.T) {
				mustOK(t, beta(t, srv, http.MethodPatch, "/api/v2/flags/fs/seg-flag-1", []map[string]any{
					{"op": "replace", "path": "/environments/test/rules/0/clauses/0/values", "value": []string{"nested"}}}), http.StatusOK)
				mustOK(t, beta(t, srv, http.MethodDelete, "/api/v2/segments/fs/test/orgs", nil), http.StatusNoContent)
				eventually(t, "the store after the delete", func() []string {
					if n := status(); n != 5 {
						return []string{fmt.Sprintf("the status counts %d items, want 5", n)}
					}
					return mismatches(t, srv, client, segmentContexts()...)
				})
			})
		})
	}
}
