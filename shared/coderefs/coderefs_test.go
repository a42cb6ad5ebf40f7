package coderefs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/coderefs"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func newService(tb testing.TB) (*coderefs.Service, store.Table) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	return coderefs.NewService(table, audit.New(table, audit.Discard{}, "acct", nil, time.Now), nil, time.Now), table
}

func ptr[T any](v T) *T { return &v }

// upload sends a branch whose references name flags (of project p) once each.
func upload(tb testing.TB, s *coderefs.Service, repo, branch, head string, seq *int64, flags ...string) ([]coderefs.Extinction, error) {
	tb.Helper()
	var refs []coderefs.Reference
	for i, f := range flags {
		refs = append(refs, coderefs.Reference{Path: "src/" + f + ".go", Hunks: []coderefs.Hunk{{StartingLineNumber: i + 1, Lines: "use(" + f + ")", ProjKey: "p", FlagKey: f}}})
	}
	_, ext, err := s.Upload(context.Background(), repo, branch, coderefs.BranchInput{Name: ptr(branch), Head: ptr(head), SyncTime: ptr(int64(1000)),
		CommitTime: 2000, UpdateSequenceID: seq, References: refs})
	return ext, err
}

func mustRepo(tb testing.TB, s *coderefs.Service, name string) *coderefs.Repository {
	tb.Helper()
	r, err := s.Create(context.Background(), coderefs.RepositoryInput{Name: name})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func TestUploadsRecordExtinctions(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t)
	mustRepo(t, s, "app")
	steps := []struct {
		name    string
		head    string
		flags   []string
		extinct []string
	}{
		{"a first upload has nothing to compare with", "c1", []string{"alpha", "beta", "gamma"}, nil},
		{"an upload that keeps every flag records nothing", "c2", []string{"alpha", "beta", "gamma"}, nil},
		{"an upload without two of the flags makes both extinct", "c3", []string{"alpha"}, []string{"beta", "gamma"}},
		{"a flag referenced again and dropped again is extinct again", "c5", []string{}, []string{"alpha"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ext, err := upload(t, s, "app", "main", st.head, nil, st.flags...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ext {
				got = append(got, e.FlagKey)
				if e.Revision != st.head || e.Time != 2000 || e.ProjKey != "p" {
					t.Errorf("extinction %+v: want revision %s, time 2000 (the commit time), project p", e, st.head)
				}
			}
			if strings.Join(got, ",") != strings.Join(st.extinct, ",") {
				t.Errorf("extinct flags %v, want %v", got, st.extinct)
			}
		})
	}
	t.Run("the list shows every extinction of the default branch, newest first", func(t *testing.T) {
		found, err := s.Extinctions(ctx, coderefs.ExtinctionQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(found["app"]) != 3 {
			t.Fatalf("extinctions %+v, want 3 under app", found)
		}
	})
	t.Run("a scanner's post of the same extinction replaces it instead of adding one", func(t *testing.T) {
		err := s.PostExtinctions(ctx, "app", "main", []coderefs.ExtinctionInput{{Revision: ptr("c3"), Message: ptr("Remove beta"),
			Time: ptr(int64(2000)), ProjKey: ptr("p"), FlagKey: ptr("beta")}})
		if err != nil {
			t.Fatal(err)
		}
		found, _ := s.Extinctions(ctx, coderefs.ExtinctionQuery{Repo: "APP", FlagKey: "beta"})
		if len(found["app"]) != 1 || found["app"][0].Message != "Remove beta" {
			t.Errorf("beta's extinctions %+v, want one with the scanner's message", found)
		}
	})
	t.Run("filters by time need both ends", func(t *testing.T) {
		_, err := s.Extinctions(ctx, coderefs.ExtinctionQuery{From: ptr(int64(1))})
		if !fault.Is(err, fault.Invalid) {
			t.Errorf("from without to: %v, want invalid_request", err)
		}
		found, err := s.Extinctions(ctx, coderefs.ExtinctionQuery{From: ptr(int64(2001)), To: ptr(int64(3000))})
		if err != nil || len(found) != 0 {
			t.Errorf("a range after every extinction: %+v %v, want none", found, err)
		}
	})
	t.Run("another branch's extinctions show only when asked for", func(t *testing.T) {
		if _, err := upload(t, s, "app", "feature/x", "f1", nil, "delta"); err != nil {
			t.Fatal(err)
		}
		if _, err := upload(t, s, "app", "feature/x", "f2", nil); err != nil {
			t.Fatal(err)
		}
		found, _ := s.Extinctions(ctx, coderefs.ExtinctionQuery{FlagKey: "delta"})
		if len(found) != 0 {
			t.Errorf("default branch shows %+v", found)
		}
		found, _ = s.Extinctions(ctx, coderefs.ExtinctionQuery{Branch: "feature/x"})
		if len(found["app"]) != 1 || found["app"][0].FlagKey != "delta" {
			t.Errorf("feature/x shows %+v, want delta", found)
		}
	})
}

func TestUploadRules(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t)
	mustRepo(t, s, "app")
	t.Run("an update sequence id not above the stored one is a conflict that changes nothing", func(t *testing.T) {
		if _, err := upload(t, s, "app", "main", "c1", ptr(int64(5)), "alpha"); err != nil {
			t.Fatal(err)
		}
		_, err := upload(t, s, "app", "main", "c0", ptr(int64(5)))
		if !fault.Is(err, fault.SequenceConflict) {
			t.Fatalf("got %v, want updateSequenceId_conflict", err)
		}
		repo, _ := s.Get(ctx, "app")
		b, err := s.Branch(ctx, repo, "main", "", "")
		if err != nil || b.Head != "c1" || len(b.References) != 1 {
			t.Errorf("branch after refused upload: %+v %v, want head c1 with one reference", b, err)
		}
		if _, err := upload(t, s, "app", "main", "c2", ptr(int64(6)), "alpha"); err != nil {
			t.Errorf("a higher sequence id: %v", err)
		}
	})
	t.Run("references larger than one item are split and read back whole", func(t *testing.T) {
		big := strings.Repeat("x", 200_000)
		var refs []coderefs.Reference
		for i := range 4 {
			refs = append(refs, coderefs.Reference{Path: "f" + string(rune('a'+i)), Hunks: []coderefs.Hunk{{StartingLineNumber: 1, Lines: big, ProjKey: "p", FlagKey: "alpha"}}})
		}
		_, _, err := s.Upload(ctx, "app", "big", coderefs.BranchInput{Name: ptr("big"), Head: ptr("h"), SyncTime: ptr(int64(1)), References: refs})
		if err != nil {
			t.Fatal(err)
		}
		repo, _ := s.Get(ctx, "app")
		b, err := s.Branch(ctx, repo, "big", "", "")
		if err != nil || b.Chunks < 3 || len(b.References) != 4 || b.References[3].Hunks[0].Lines != big {
			t.Fatalf("read back %d chunks, %d references (%v)", b.Chunks, len(b.References), err)
		}
		// A smaller upload leaves no stale chunk behind.
		if _, err := upload(t, s, "app", "big", "h2", nil, "alpha"); err != nil {
			t.Fatal(err)
		}
		b, _ = s.Branch(ctx, repo, "big", "", "")
		if b.Chunks != 1 || len(b.References) != 1 {
			t.Errorf("after a small upload: %d chunks, %d references", b.Chunks, len(b.References))
		}
	})
	bad := []struct {
		name string
		in   coderefs.BranchInput
		want string
	}{
		{"a body naming another branch is refused", coderefs.BranchInput{Name: ptr("other"), Head: ptr("h"), SyncTime: ptr(int64(1))}, "path names branch"},
		{"a body without head is refused", coderefs.BranchInput{Name: ptr("main"), SyncTime: ptr(int64(1))}, "head"},
		{"a body without syncTime is refused", coderefs.BranchInput{Name: ptr("main"), Head: ptr("h")}, "syncTime"},
		{"a reference without path is refused", coderefs.BranchInput{Name: ptr("main"), Head: ptr("h"), SyncTime: ptr(int64(1)),
			References: []coderefs.Reference{{Hunks: []coderefs.Hunk{}}}}, "references[0].path"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.Upload(ctx, "app", "main", tc.in)
			if !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want invalid_request naming %q", err, tc.want)
			}
		})
	}
	t.Run("a disabled repository takes no upload", func(t *testing.T) {
		e, err := coderefs.ParseEdit([]byte(`{"enabled": false}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Patch(ctx, "app", e); err != nil {
			t.Fatal(err)
		}
		if _, err := upload(t, s, "app", "main", "c9", ptr(int64(9)), "alpha"); !fault.Is(err, fault.Invalid) {
			t.Errorf("got %v, want invalid_request", err)
		}
	})
}

func TestRepositories(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t)
	r := mustRepo(t, s, "Docs")
	if r.Type != "custom" || r.DefaultBranch != "main" || !r.Enabled {
		t.Errorf("defaults: %+v, want type custom, default branch main, enabled", r)
	}
	t.Run("names are case-insensitive: another case is the same repository", func(t *testing.T) {
		if _, err := s.Create(ctx, coderefs.RepositoryInput{Name: "docs"}); !fault.Is(err, fault.Conflict) {
			t.Errorf("got %v, want conflict", err)
		}
		if got, err := s.Get(ctx, "DOCS"); err != nil || got.Name != "Docs" {
			t.Errorf("get DOCS: %+v %v", got, err)
		}
	})
	edits := []struct {
		name string
		body string
		want string // error text; empty: accepted
	}{
		{"a merge patch sets fields", `{"defaultBranch": "trunk", "sourceLink": "https://git.example/docs"}`, ""},
		{"a JSON patch sets fields", `[{"op": "replace", "path": "/type", "value": "github"}]`, ""},
		{"a merge patch of an unknown field is refused", `{"colour": "red"}`, "colour"},
		{"a JSON patch of the name is refused", `[{"op": "replace", "path": "/name", "value": "x"}]`, "name"},
		{"a merge patch renaming is refused", `{"name": "other"}`, "cannot change"},
		{"a type outside the list is refused", `{"type": "svn"}`, "bitbucket"},
		{"a source link that is not a URL is refused", `{"sourceLink": "javascript:alert(1)"}`, "http"},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			e, err := coderefs.ParseEdit([]byte(tc.body))
			if err == nil {
				_, err = s.Patch(ctx, "docs", e)
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	got, _ := s.Get(ctx, "docs")
	if got.DefaultBranch != "trunk" || got.Type != "github" || got.SourceLink != "https://git.example/docs" || got.Version != 3 {
		t.Errorf("after patches: %+v", got)
	}
	t.Run("a repository deleted and created again starts with no branch", func(t *testing.T) {
		if _, err := upload(t, s, "docs", "trunk", "c1", nil, "alpha"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "docs"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "docs"); !fault.Is(err, fault.NotFound) {
			t.Errorf("get after delete: %v, want not_found", err)
		}
		again := mustRepo(t, s, "docs")
		branches, err := s.Branches(ctx, again)
		if err != nil || len(branches) != 0 {
			t.Errorf("branches of the new repository: %d %v", len(branches), err)
		}
	})
}

func TestDeleteBranchesAndFlagReferences(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t)
	mustRepo(t, s, "one")
	mustRepo(t, s, "two")
	for _, u := range []struct{ repo, branch string }{{"one", "main"}, {"one", "old"}, {"two", "main"}} {
		if _, err := upload(t, s, u.repo, u.branch, "h", nil, "alpha", "beta"); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("flag references add up the default branches of every repository", func(t *testing.T) {
		got, err := s.FlagReferences(ctx, "p")
		if err != nil || got["alpha"] != 2 || got["beta"] != 2 || len(got) != 2 {
			t.Errorf("got %v %v, want alpha 2, beta 2", got, err)
		}
		if other, _ := s.FlagReferences(ctx, "q"); len(other) != 0 {
			t.Errorf("another project: %v, want none", other)
		}
	})
	t.Run("deleting branches removes the named ones and skips unknown names", func(t *testing.T) {
		if err := s.DeleteBranches(ctx, "one", []string{"old", "never-there", "old"}); err != nil {
			t.Fatal(err)
		}
		repo, _ := s.Get(ctx, "one")
		list, _ := s.Branches(ctx, repo)
		if len(list) != 1 || list[0].Name != "main" {
			t.Errorf("branches left: %+v, want main", list)
		}
		if _, err := s.Branch(ctx, repo, "old", "", ""); !fault.Is(err, fault.NotFound) {
			t.Errorf("get deleted branch: %v", err)
		}
	})
	t.Run("an extinction posted for a branch never uploaded is a 404", func(t *testing.T) {
		err := s.PostExtinctions(ctx, "one", "nope", []coderefs.ExtinctionInput{{Revision: ptr("r"), Message: ptr("m"), Time: ptr(int64(1)), ProjKey: ptr("p"), FlagKey: ptr("alpha")}})
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("got %v, want not_found", err)
		}
	})
	t.Run("a long extinction message is cut at a character boundary", func(t *testing.T) {
		msg := strings.Repeat("é", coderefs.MaxMessageLen)
		err := s.PostExtinctions(ctx, "one", "main", []coderefs.ExtinctionInput{{Revision: ptr("r"), Message: ptr(msg), Time: ptr(int64(1)), ProjKey: ptr("p"), FlagKey: ptr("zeta")}})
		if err != nil {
			t.Fatal(err)
		}
		found, _ := s.Extinctions(ctx, coderefs.ExtinctionQuery{Repo: "one", FlagKey: "zeta"})
		m := found["one"][0].Message
		if len(m) > coderefs.MaxMessageLen || !strings.HasSuffix(m, "…") || !strings.HasPrefix(m, "éé") {
			t.Errorf("message of %d bytes ending %q", len(m), m[len(m)-6:])
		}
	})
}

func TestReferencesReadDuringAnUpload(t *testing.T) {
	ctx := context.Background()
	s, table := newService(t)
	repo := mustRepo(t, s, "app")
	if _, err := upload(t, s, "app", "main", "c1", nil, "alpha"); err != nil {
		t.Fatal(err)
	}
	listed, err := s.Branches(ctx, repo)
	if err != nil || len(listed) != 1 {
		t.Fatalf("branches %v, %v", listed, err)
	}
	if _, err := upload(t, s, "app", "main", "c2", nil, "beta"); err != nil {
		t.Fatal(err)
	}
	t.Run("a branch listed before an upload shows the upload's references", func(t *testing.T) {
		b, err := s.WithReferences(ctx, repo, listed[0], "", "")
		if err != nil {
			t.Fatal(err)
		}
		if b.Head != "c2" || len(b.References) != 1 || b.References[0].Hunks[0].FlagKey != "beta" {
			t.Errorf("branch %+v, references %+v", b, b.References)
		}
	})
	t.Run("references that stay torn are a conflict to retry", func(t *testing.T) {
		k := store.CodeBranchChunkKey(repo.ID, "main", 0)
		it, err := table.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		it.Version += 10 // a chunk of another upload than the summary's
		if err := table.Put(ctx, it, store.Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Branch(ctx, repo, "main", "", ""); !fault.Is(err, fault.OptimisticLock) {
			t.Errorf("got %v, want a conflict", err)
		}
	})
}
