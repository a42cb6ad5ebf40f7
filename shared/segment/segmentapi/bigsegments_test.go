package segmentapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/segment/segmentapi"
)

// bigWorld is a server with project p, and in production a big segment
// of users "big" and one of organizations "orgs".
func bigWorld(tb testing.TB) *apptest.Server {
	tb.Helper()
	srv := apptest.New(tb)
	srv.MustCreateProject(tb, "p")
	for _, s := range []map[string]any{
		{"key": "big", "name": "Big", "unbounded": true, "unboundedContextKind": "user"},
		{"key": "orgs", "name": "Orgs", "unbounded": true, "unboundedContextKind": "organization"},
		{"key": "small", "name": "Small"},
	} {
		apptest.WantStatus(tb, srv.Do(tb, http.MethodPost, segsPath("p", "production"), s), http.StatusCreated)
	}
	return srv
}

type targetDoc struct {
	UserKey  string `json:"userKey"`
	Included bool   `json:"included"`
	Excluded bool   `json:"excluded"`
}

// member reads a key's membership through the API.
func member(tb testing.TB, srv *apptest.Server, seg, form, key string) targetDoc {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, segPath("p", "production", seg)+"/"+form+"/"+key, nil)
	apptest.WantStatus(tb, res, http.StatusOK)
	var d targetDoc
	res.JSON(tb, &d)
	return d
}

func lists(add, remove []string) map[string]any { return map[string]any{"add": add, "remove": remove} }

// runJobs runs the imports and exports worker once.
func runJobs(tb testing.TB, srv *apptest.Server) {
	tb.Helper()
	if err := srv.App.RunWorker(context.Background(), segmentapi.JobsWorker, slog.New(slog.DiscardHandler)); err != nil {
		tb.Fatalf("run %s: %v", segmentapi.JobsWorker, err)
	}
}

// post sends a raw body and returns the answer.
func post(tb testing.TB, srv *apptest.Server, path, body, contentType string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, http.MethodPost, path, body, "Content-Type", contentType)
}

func importBody(tb testing.TB, mode, csv string) (string, string) {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if mode != "" {
		mw.WriteField("mode", mode)
	}
	f, err := mw.CreateFormFile("file", "keys.csv")
	if err != nil {
		tb.Fatal(err)
	}
	io.WriteString(f, csv)
	mw.Close()
	return buf.String(), mw.FormDataContentType()
}

// lastEntry is the newest audit entry's actions and resource.
func lastEntry(tb testing.TB, srv *apptest.Server) (actions []string, resource string, total int) {
	tb.Helper()
	var page struct {
		Items []struct {
			Accesses []struct{ Action, Resource string } `json:"accesses"`
		} `json:"items"`
	}
	srv.Do(tb, http.MethodGet, "/api/v2/auditlog?limit=20", nil).JSON(tb, &page)
	for _, a := range page.Items[0].Accesses {
		actions = append(actions, a.Action)
		resource = a.Resource
	}
	return actions, resource, len(page.Items)
}

func TestBigSegmentTargetsAreReadBackAsTheyWereChanged(t *testing.T) {
	srv := bigWorld(t)
	before := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "big"), nil), http.StatusOK)
	_, _, entries := lastEntry(t, srv)
	res := srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users", map[string]any{
		"included": lists([]string{"alice", "bob"}, nil), "excluded": lists([]string{"mallory"}, nil)})
	apptest.WantStatus(t, res, http.StatusNoContent)

	for _, tc := range []struct {
		name, key          string
		included, excluded bool
	}{
		{"an included user is included", "alice", true, false},
		{"an excluded user is excluded", "mallory", false, true},
		{"a user on neither list is neither, not a 404", "nobody", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := member(t, srv, "big", "users", tc.key)
			if got != (targetDoc{tc.key, tc.included, tc.excluded}) {
				t.Fatalf("got %+v, want included %v excluded %v", got, tc.included, tc.excluded)
			}
		})
	}
	t.Run("the change is one audit entry on the segment, with both actions, and moves its version", func(t *testing.T) {
		actions, resource, n := lastEntry(t, srv)
		slices.Sort(actions)
		if !slices.Equal(actions, []string{"updateExcluded", "updateIncluded"}) || !strings.HasPrefix(resource, "proj/p:env/production:segment/big") || n != entries+1 {
			t.Fatalf("entry actions %v on %q, %d entries after %d", actions, resource, n, entries)
		}
		after := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "big"), nil), http.StatusOK)
		if after.Version != before.Version+1 || len(after.Included) != 0 {
			t.Fatalf("version %d -> %d, included %v: members stay apart from the segment", before.Version, after.Version, after.Included)
		}
	})
	t.Run("a removed user is no longer included", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users",
			map[string]any{"included": lists(nil, []string{"bob"})}), http.StatusNoContent)
		if got := member(t, srv, "big", "users", "bob"); got.Included {
			t.Fatalf("bob is still included: %+v", got)
		}
		if actions, _, _ := lastEntry(t, srv); !slices.Equal(actions, []string{"updateIncluded"}) {
			t.Fatalf("entry actions %v, want updateIncluded alone", actions)
		}
	})
	t.Run("a change of more keys than one transaction holds is applied whole, as one entry", func(t *testing.T) {
		var keys []string
		for i := range 1000 {
			keys = append(keys, fmt.Sprintf("bulk-%04d", i))
		}
		_, _, n := lastEntry(t, srv)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users",
			map[string]any{"included": lists(keys, nil)}), http.StatusNoContent)
		for _, k := range []string{keys[0], keys[499], keys[999]} {
			if !member(t, srv, "big", "users", k).Included {
				t.Fatalf("%s is not included", k)
			}
		}
		if _, _, after := lastEntry(t, srv); after != min(n+1, 20) {
			t.Fatalf("%d entries after %d, want one more", after, n)
		}
	})
	t.Run("the contexts form changes a segment of organizations", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "orgs")+"/contexts",
			map[string]any{"included": lists([]string{"org-1"}, nil)}), http.StatusNoContent)
		if got := member(t, srv, "orgs", "contexts", "org-1"); !got.Included {
			t.Fatalf("org-1: %+v", got)
		}
	})
}

func TestBigSegmentOperationsRefuseWhatTheyCannotDo(t *testing.T) {
	srv := bigWorld(t)
	seg := func(k string) string { return segPath("p", "production", k) }
	csv, ct := importBody(t, "merge", "a\n")
	for _, tc := range []struct {
		name   string
		do     func() *apptest.Response
		status int
		says   string
	}{
		{"a standard segment has no big segment targets", func() *apptest.Response {
			return srv.Do(t, http.MethodPost, seg("small")+"/users", map[string]any{"included": lists([]string{"a"}, nil)})
		}, http.StatusBadRequest, "not a big segment"},
		{"a standard segment has no membership to read", func() *apptest.Response {
			return srv.Do(t, http.MethodGet, seg("small")+"/contexts/a", nil)
		}, http.StatusBadRequest, "not a big segment"},
		{"a standard segment takes no import", func() *apptest.Response { return post(t, srv, seg("small")+"/imports", csv, ct) },
			http.StatusBadRequest, "not a big segment"},
		{"a standard segment has no export", func() *apptest.Response {
			return srv.Do(t, http.MethodPost, seg("small")+"/exports", nil)
		}, http.StatusBadRequest, "not a big segment"},
		{"the users form does not change a segment of organizations", func() *apptest.Response {
			return srv.Do(t, http.MethodPost, seg("orgs")+"/users", map[string]any{"included": lists([]string{"a"}, nil)})
		}, http.StatusBadRequest, "organization"},
		{"a key both added and removed is refused", func() *apptest.Response {
			return srv.Do(t, http.MethodPost, seg("big")+"/users", map[string]any{"included": lists([]string{"a"}, []string{"a"})})
		}, http.StatusBadRequest, "both added and removed"},
		{"a body that changes nothing is refused", func() *apptest.Response {
			return srv.Do(t, http.MethodPost, seg("big")+"/users", map[string]any{})
		}, http.StatusBadRequest, "changes nothing"},
		{"an import in another mode is refused", func() *apptest.Response {
			b, c := importBody(t, "append", "a\n")
			return post(t, srv, seg("big")+"/imports", b, c)
		}, http.StatusBadRequest, "merge or replace"},
		{"an import that is not multipart is refused", func() *apptest.Response {
			return post(t, srv, seg("big")+"/imports", "a\n", "text/csv")
		}, http.StatusUnsupportedMediaType, "multipart/form-data"},
		{"a missing segment is a 404", func() *apptest.Response {
			return srv.Do(t, http.MethodGet, seg("nope")+"/users/a", nil)
		}, http.StatusNotFound, "nope"},
		{"a missing import is a 404", func() *apptest.Response {
			return srv.Do(t, http.MethodGet, seg("big")+"/imports/0b0c5a9e-0000-4000-8000-000000000000", nil)
		}, http.StatusNotFound, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.do()
			apptest.WantStatus(t, res, tc.status)
			if !strings.Contains(res.String(), tc.says) {
				t.Fatalf("answer %s does not say %q", res, tc.says)
			}
		})
	}
}

// importDoc is an Import as the API answers it.
type importDoc struct {
	ID     string `json:"id"`
	Mode   string `json:"mode"`
	Status string `json:"status"`
	Files  []struct{ Filename, Status string }
}

// startImport uploads csv in mode and returns the import's path.
func startImport(tb testing.TB, srv *apptest.Server, seg, mode, csv string) string {
	tb.Helper()
	body, ct := importBody(tb, mode, csv)
	res := post(tb, srv, segPath("p", "production", seg)+"/imports", body, ct)
	apptest.WantStatus(tb, res, http.StatusNoContent)
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, segPath("p", "production", seg)+"/imports/") {
		tb.Fatalf("Location %q is not an import of %s", loc, seg)
	}
	return loc
}

func TestBigSegmentImportsAddAndReplaceMembers(t *testing.T) {
	srv := bigWorld(t)
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users",
		map[string]any{"included": lists([]string{"old-1", "old-2"}, nil)}), http.StatusNoContent)

	loc := startImport(t, srv, "big", "merge", "key\nnew-1\n\"new,2\"\nnew-1\n")
	t.Run("an accepted import is ready, and a second one waits for it", func(t *testing.T) {
		var d importDoc
		srv.Do(t, http.MethodGet, loc, nil).JSON(t, &d)
		if d.Status != segment.StatusReady || d.Mode != "merge" || len(d.Files) != 1 || d.Files[0].Filename != "keys.csv" {
			t.Fatalf("import %+v", d)
		}
		body, ct := importBody(t, "merge", "x\n")
		apptest.WantStatus(t, post(t, srv, segPath("p", "production", "big")+"/imports", body, ct), http.StatusConflict)
	})
	runJobs(t, srv)
	t.Run("a merge adds the file's keys (not its header) and keeps the others", func(t *testing.T) {
		var d importDoc
		srv.Do(t, http.MethodGet, loc, nil).JSON(t, &d)
		if d.Status != segment.StatusComplete {
			t.Fatalf("import %+v, want complete", d)
		}
		for key, want := range map[string]bool{"new-1": true, "new,2": true, "old-1": true, "key": false} {
			if got := member(t, srv, "big", "users", key).Included; got != want {
				t.Errorf("%q included %v, want %v", key, got, want)
			}
		}
		if actions, resource, _ := lastEntry(t, srv); !slices.Equal(actions, []string{"updateIncluded"}) || !strings.Contains(resource, "segment/big") {
			t.Errorf("import entry %v on %s", actions, resource)
		}
	})
	t.Run("a replace leaves exactly the file's keys", func(t *testing.T) {
		startImport(t, srv, "big", "replace", "new-1\nfresh\n")
		runJobs(t, srv)
		for key, want := range map[string]bool{"new-1": true, "fresh": true, "old-1": false, "old-2": false, "new,2": false} {
			if got := member(t, srv, "big", "users", key).Included; got != want {
				t.Errorf("%q included %v, want %v", key, got, want)
			}
		}
	})
	t.Run("a segment deleted and created again shows none of the old members", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, segPath("p", "production", "big"), nil), http.StatusNoContent)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segsPath("p", "production"),
			map[string]any{"key": "big", "name": "Big again", "unbounded": true}), http.StatusCreated)
		if got := member(t, srv, "big", "users", "fresh"); got.Included {
			t.Fatalf("the new generation shows an old member: %+v", got)
		}
	})
}

func TestBigSegmentExportsServeTheMembersAsCSV(t *testing.T) {
	srv := bigWorld(t)
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("user-%03d", i))
	}
	keys = append(keys, `quoted "key", with a comma`)
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users",
		map[string]any{"included": lists(keys, nil), "excluded": lists([]string{"excluded-one"}, nil)}), http.StatusNoContent)
	res := srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/exports", nil)
	apptest.WantStatus(t, res, http.StatusOK)
	loc := res.Header.Get("Location")
	var d struct {
		Status    string                                 `json:"status"`
		SizeBytes int64                                  `json:"sizeBytes"`
		Links     map[string]struct{ Href, Type string } `json:"_links"`
	}
	srv.Do(t, http.MethodGet, loc, nil).JSON(t, &d)
	if d.Status != segment.StatusReady || d.Links["exportDownload"].Href != "" {
		t.Fatalf("export before the worker ran: %+v", d)
	}
	runJobs(t, srv)
	srv.Do(t, http.MethodGet, loc, nil).JSON(t, &d)
	if d.Status != segment.StatusComplete || d.Links["exportDownload"].Type != "text/csv" || d.SizeBytes == 0 {
		t.Fatalf("export after the worker ran: %+v", d)
	}
	file := srv.Do(t, http.MethodGet, d.Links["exportDownload"].Href, nil, "Accept", "text/csv")
	apptest.WantStatus(t, file, http.StatusOK)
	t.Run("the file holds every included key once, and only those", func(t *testing.T) {
		if int64(len(file.Body)) != d.SizeBytes {
			t.Fatalf("file of %d bytes, sizeBytes %d", len(file.Body), d.SizeBytes)
		}
		// Imported again, the file gives the same members.
		startImport(t, srv, "orgs", "merge", string(file.Body))
		runJobs(t, srv)
		for _, k := range []string{keys[0], keys[299], keys[300]} {
			if !member(t, srv, "orgs", "contexts", k).Included {
				t.Errorf("%q is not in the re-imported file", k)
			}
		}
		if member(t, srv, "orgs", "contexts", "excluded-one").Included {
			t.Error("the export holds an excluded key")
		}
	})
}

func TestSegmentsEvaluateSaysHowAContextIsAMember(t *testing.T) {
	srv := bigWorld(t)
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, segPath("p", "production", "big")+"/users",
		map[string]any{"included": lists([]string{"alice"}, nil), "excluded": lists([]string{"mallory"}, nil)}), http.StatusNoContent)
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, segPath("p", "production", "small"), []map[string]any{
		{"op": "add", "path": "/included/-", "value": "alice"},
		{"op": "add", "path": "/rules/-", "value": map[string]any{"_id": "corp", "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@corp.example"}}}}},
	}), http.StatusOK)
	type got struct{ member, individually, byRules bool }
	for _, tc := range []struct {
		name    string
		context map[string]any
		want    map[string]got
	}{
		{"an included user is an individual member of both",
			map[string]any{"kind": "user", "key": "alice"},
			map[string]got{"big": {true, true, false}, "small": {true, true, false}, "orgs": {}}},
		{"a user matched by a rule is a member by rules",
			map[string]any{"kind": "user", "key": "carol", "email": "carol@corp.example"},
			map[string]got{"big": {}, "small": {true, false, true}, "orgs": {}}},
		{"an excluded user is no member",
			map[string]any{"kind": "user", "key": "mallory"},
			map[string]got{"big": {}, "small": {}, "orgs": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, "/api/v2/projects/p/environments/production/segments/evaluate", tc.context)
			apptest.WantStatus(t, res, http.StatusOK)
			var page struct {
				Items []struct {
					Key                                              string
					IsMember, IsIndividuallyTargeted, IsRuleTargeted bool
				} `json:"items"`
			}
			res.JSON(t, &page)
			if len(page.Items) != len(tc.want) {
				t.Fatalf("%d segments, want %d", len(page.Items), len(tc.want))
			}
			for _, it := range page.Items {
				if g := (got{it.IsMember, it.IsIndividuallyTargeted, it.IsRuleTargeted}); g != tc.want[it.Key] {
					t.Errorf("%s: got %+v, want %+v", it.Key, g, tc.want[it.Key])
				}
			}
		})
	}
}
