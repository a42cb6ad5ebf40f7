package featurestoreapi_test

// The proof that big segments reach the SDKs: a big segment of a million
// members, imported from CSV through the API, is written by flagplane to
// a Redis and a DynamoDB big segment store, and LaunchDarkly's Go SDK in
// daemon mode, with its own big segment integrations, evaluates a flag
// matching it correctly for members, excluded members and others, as
// flagplane's evaluate operation does; a targets update then reaches it.
// The member count is FLAGPLANE_BIG_SEGMENT_MEMBERS (see bigMembers).

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/segment/segmentapi"
)

// bigMembers is how many members the big segment gets in a store of
// kind: FLAGPLANE_BIG_SEGMENT_MEMBERS, else a million in Redis and a
// hundred thousand in DynamoDB Local, which writes some 1,800 memberships
// a second here (a million took 9m45s: run them with the variable set).
func bigMembers(tb testing.TB, kind string) int {
	tb.Helper()
	n := 1_000_000
	if kind == "dynamodb" {
		n = 100_000
	}
	if v := os.Getenv("FLAGPLANE_BIG_SEGMENT_MEMBERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			tb.Fatalf("FLAGPLANE_BIG_SEGMENT_MEMBERS=%q: want a number of at least 100", v)
		}
	}
	return n
}

func memberKey(i int) string { return fmt.Sprintf("member-%08d", i) }

// importMembers uploads a CSV of n member keys to big segment "big" and
// runs the jobs worker until the import is complete.
func importMembers(tb testing.TB, srv *apptest.Server, n int) {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("mode", "replace")
	f, _ := mw.CreateFormFile("file", "members.csv")
	for i := range n {
		fmt.Fprintf(f, "%s\n", memberKey(i))
	}
	mw.Close()
	res := srv.Do(tb, http.MethodPost, "/api/v2/segments/fs/test/big/imports", buf.Bytes(), "Content-Type", mw.FormDataContentType())
	mustOK(tb, res, http.StatusNoContent)
	if err := srv.App.RunWorker(context.Background(), segmentapi.JobsWorker, slog.New(slog.DiscardHandler)); err != nil {
		tb.Fatalf("run the import: %v", err)
	}
	var imp struct{ Status string }
	mustOK(tb, srv.Do(tb, http.MethodGet, res.Header.Get("Location"), nil), http.StatusOK).JSON(tb, &imp)
	if imp.Status != "complete" {
		tb.Fatalf("import %s after the worker ran", imp.Status)
	}
}

func TestTheSDKInDaemonModeEvaluatesABigSegmentOfAMillionMembers(t *testing.T) {
	for _, k := range []storeKind{redisKind(), dynamoKind()} {
		t.Run(k.name, func(t *testing.T) {
			n := bigMembers(t, k.name)
			srv := apptest.New(t, apptest.WithWebhookDelivery())
			srv.MustCreateProject(t, "fs")
			mustOK(t, srv.Do(t, http.MethodPost, "/api/v2/segments/fs/test", map[string]any{"key": "big", "name": "Big", "unbounded": true}), http.StatusCreated)
			// Its rule matches corp users who are not excluded.
			mustOK(t, srv.Do(t, http.MethodPatch, "/api/v2/segments/fs/test/big", []map[string]any{{"op": "add", "path": "/rules/-",
				"value": map[string]any{"_id": "corp", "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@corp.example"}}}}}}), http.StatusOK)
			mustOK(t, beta(t, srv, http.MethodPost, "/api/v2/flags/fs", map[string]any{"key": "in-big", "name": "In big",
				"variations": []map[string]any{{"value": true}, {"value": false}}}), http.StatusCreated)
			mustOK(t, beta(t, srv, http.MethodPatch, "/api/v2/flags/fs/in-big", []map[string]any{
				{"op": "replace", "path": "/environments/test/on", "value": true},
				{"op": "replace", "path": "/environments/test/rules", "value": []map[string]any{{"variation": 0,
					"clauses": []map[string]any{{"attribute": "key", "op": "segmentMatch", "values": []string{"big"}}}}}},
				{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 1}},
			}), http.StatusOK)

			config := k.config(t, "p"+uuid.NewString()[:8])
			for _, capability := range []string{"featureStore", "big-segment-store"} {
				mustOK(t, beta(t, srv, http.MethodPost, "/api/v2/integration-capabilities/"+capability+"/fs/test/"+k.name,
					map[string]any{"name": capability, "on": true, "config": config}), http.StatusCreated)
			}
			client := daemonClient(t, k, config)

			start := time.Now()
			importMembers(t, srv, n)
			mustOK(t, srv.Do(t, http.MethodPost, "/api/v2/segments/fs/test/big/users", map[string]any{
				"excluded": map[string]any{"add": []string{"corp-excluded", memberKey(7)}}}), http.StatusNoContent)
			corp := func(key string) ldcontext.Context {
				return ldcontext.NewBuilder(key).SetString("email", key+"@corp.example").Build()
			}
			cases := []struct {
				what string
				c    ldcontext.Context
				want bool
			}{
				{"the first member", ldcontext.New(memberKey(0)), true},
				{"a member in the middle", ldcontext.New(memberKey(n / 2)), true},
				{"the last member", ldcontext.New(memberKey(n - 1)), true},
				{"a member also excluded (inclusion wins)", ldcontext.New(memberKey(7)), true},
				{"an excluded corp user (exclusion beats the rule)", corp("corp-excluded"), false},
				{"a corp user matched by the rule", corp("corp-other"), true},
				{"a key past the members", ldcontext.New(memberKey(n)), false},
				{"a stranger", ldcontext.New("stranger"), false},
			}
			check := func(want func(i int) bool) []string {
				var out []string
				for i, tc := range cases {
					got, detail, err := client.BoolVariationDetail("in-big", tc.c, !want(i))
					if err != nil || got != want(i) {
						out = append(out, fmt.Sprintf("%s: SDK %v (%v, big segments %v), want %v", tc.what, got, err, detail.Reason.GetBigSegmentsStatus(), want(i)))
					}
					if fp := evaluate(t, srv, tc.c)["in-big"]; string(fp) != strconv.FormatBool(want(i)) {
						out = append(out, fmt.Sprintf("%s: flagplane evaluates %s, want %v", tc.what, fp, want(i)))
					}
				}
				return out
			}
			t.Run("members, excluded members and others evaluate as their membership says", func(t *testing.T) {
				// The consumer writes the import's batch to the store after the
				// import's entry, and the refresh worker carries on what a delivery's
				// budget left: a million members take a while.
				within(t, 15*time.Minute, "the SDK's evaluations", func() []string {
					if wrong := check(func(i int) bool { return cases[i].want }); len(wrong) > 0 {
						// As if the refresh's minute had come: it carries on the sync.
						if err := srv.App.RunWorker(context.Background(), "big-segments-refresh", slog.New(slog.DiscardHandler)); err != nil {
							t.Logf("big-segments-refresh: %v", err)
						}
						return wrong
					}
					return nil
				})
				t.Logf("%d members imported and in the %s store after %s", n, k.name, time.Since(start).Round(time.Second))
			})
			t.Run("a targets update reaches the SDK", func(t *testing.T) {
				mustOK(t, srv.Do(t, http.MethodPost, "/api/v2/segments/fs/test/big/users", map[string]any{
					"included": map[string]any{"add": []string{"stranger"}, "remove": []string{memberKey(0)}}}), http.StatusNoContent)
				eventually(t, "the SDK's evaluations after the update", func() []string {
					return check(func(i int) bool {
						switch cases[i].what {
						case "a stranger":
							return true
						case "the first member":
							return false
						}
						return cases[i].want
					})
				})
			})
		})
	}
}

// within retries check until it returns nothing, for up to d.
func within(tb testing.TB, d time.Duration, what string, check func() []string) {
	tb.Helper()
	var last []string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if last = check(); len(last) == 0 {
			return
		}
	}
	tb.Fatalf("%s: still wrong after %s: %v", what, d, last)
}
