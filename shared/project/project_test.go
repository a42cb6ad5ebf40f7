package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	svc   *project.Service
	now   func() time.Time
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	// Each reading of the clock is a millisecond later, so projects made in turn sort by creation.
	var mu sync.Mutex
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); t0 = t0.Add(time.Millisecond); return t0 }
	a := audittest.New(tb, now)
	return &rig{table: a.Table, log: a.Log, svc: project.NewService(a.Table, a.Log, now), now: now}
}

func ptr[T any](v T) *T { return &v }

func (r *rig) create(tb testing.TB, key, name string, tags ...string) *project.Project {
	tb.Helper()
	p, _, err := r.svc.Create(context.Background(), project.Input{Key: ptr(key), Name: ptr(name), Tags: tags})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func mustPatch(tb testing.TB, body string) patch.Patch {
	tb.Helper()
	p, err := patch.Parse([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestCreate(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	t.Run("a project gets test and production, stored with their credentials, in one change", func(t *testing.T) {
		p, envs, err := r.svc.Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")})
		if err != nil || len(envs) != 2 || envs[0].Key != "test" || envs[1].Key != "production" || p.Tags == nil {
			t.Fatalf("project %+v, envs %d, %v", p, len(envs), err)
		}
		if _, err := r.table.Get(ctx, store.EnvironmentKey("p", "production")); err != nil {
			t.Errorf("production not stored: %v", err)
		}
		if a := audittest.Actions(t, r.log, "project"); strings.Join(a, " ") != "createProject" {
			t.Errorf("audit actions %v", a)
		}
	})
	refused := []struct {
		name string
		in   project.Input
		part string
	}{
		{"a tag with a space is refused naming the field", project.Input{Key: ptr("q"), Name: ptr("Q"), Tags: []string{"no spaces"}}, `"tags`},
		{"a repeated environment key is refused naming its index", project.Input{Key: ptr("q"), Name: ptr("Q"),
			Environments: []json.RawMessage{json.RawMessage(`{"key":"a","name":"A","color":"ffffff"}`), json.RawMessage(`{"key":"a","name":"B","color":"ffffff"}`)}}, `"environments[1].key"`},
	}
	for _, c := range refused {
		t.Run(c.name+" and nothing is stored", func(t *testing.T) {
			_, _, err := r.svc.Create(ctx, c.in)
			faulttest.Want(t, err, fault.Invalid, c.part)
			if _, err := r.table.Get(ctx, store.EnvironmentKey("q", "a")); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("environment of a refused project: %v", err)
			}
			_, err = r.svc.Get(ctx, "q")
			faulttest.Want(t, err, fault.NotFound, `"q"`)
		})
	}
}

func TestGuard(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(t, "p", "P")
	other := store.Item{PK: "PROJ#p", SK: "THING", Version: 1, Data: []byte(`{}`)}
	cases := []struct {
		name   string
		change func(tb testing.TB)
		lands  bool
	}{
		{"a write guarded by an unchanged project lands", func(testing.TB) {}, true},
		{"a write guarded by a project renamed since is refused", func(tb testing.TB) {
			if _, err := r.svc.Patch(ctx, "p", mustPatch(tb, `[{"op":"replace","path":"/name","value":"Renamed"}]`)); err != nil {
				tb.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			guard, err := r.svc.Guard(ctx, "p")
			if err != nil {
				t.Fatal(err)
			}
			c.change(t)
			err = r.table.Transact(ctx, []store.Write{guard, store.Put(other, store.Cond{})})
			if lands := err == nil; lands != c.lands {
				t.Errorf("write landed %v (%v), want %v", lands, err, c.lands)
			}
		})
	}
	t.Run("a missing project gives no guard", func(t *testing.T) {
		_, err := r.svc.Guard(ctx, "nope")
		faulttest.Want(t, err, fault.NotFound, `"nope"`)
	})
}

func TestDeleteFinishesAfterACrash(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(t, "p", "P")
	r.create(t, "kept", "Kept")
	// The mark's commit lands and then reports a failure, as a worker that stopped there.
	crash := &storetest.CrashOnce{Table: r.table}
	crashing := project.NewService(crash, audit.New(crash, audit.Discard{}, "acct", audittest.Quiet, r.now), r.now)
	if err := crashing.Delete(ctx, "p"); err == nil {
		t.Fatal("the first delete did not see the crash")
	}
	t.Run("the marked project reads as not found and is left out of the list", func(t *testing.T) {
		_, err := r.svc.Get(ctx, "p")
		faulttest.Want(t, err, fault.NotFound, `"p"`)
		res, err := r.svc.List(ctx, project.ListQuery{Limit: 10})
		if err != nil || res.TotalCount != 1 || res.Items[0].Key != "kept" {
			t.Errorf("list %+v, %v", res, err)
		}
	})
	t.Run("its environments are still stored until the delete is run again", func(t *testing.T) {
		if _, err := r.table.Get(ctx, store.EnvironmentKey("p", "test")); err != nil {
			t.Errorf("environment: %v", err)
		}
	})
	t.Run("deleting again removes everything under it, recording the delete once", func(t *testing.T) {
		if err := r.svc.Delete(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		page, err := r.table.Query(ctx, store.Query{PK: store.ProjectPartition("p")})
		if err != nil || len(page.Items) != 0 {
			t.Errorf("%d items left, %v", len(page.Items), err)
		}
		if a := strings.Join(audittest.Actions(t, r.log, "project"), " "); a != "createProject createProject deleteProject" {
			t.Errorf("audit actions %q", a)
		}
	})
	t.Run("the key can be used again", func(t *testing.T) {
		r.create(t, "p", "Again")
	})
}

func TestList(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(t, "b", "bravo", "x")
	r.create(t, "a", "Alpha", "x", "y")
	r.create(t, "c", "charlie")
	r.create(t, "d", "alpha")
	cases := []struct {
		name  string
		q     project.ListQuery
		want  string
		total int64
	}{
		{"with no sort projects come by key", project.ListQuery{Limit: 10}, "a b c d", 4},
		{"name sorts ignore case, ties by key", project.ListQuery{Sort: "name", Limit: 10}, "a d b c", 4},
		{"a descending creation sort puts the newest first", project.ListQuery{Sort: "-createdOn", Limit: 10}, "d c a b", 4},
		{"a keys filter keeps the keys named", project.ListQuery{Filter: "keys:c|a", Limit: 10}, "a c", 2},
		{"a tags filter keeps projects with every tag", project.ListQuery{Filter: "tags:x+y", Limit: 10}, "a", 1},
		{"what the caller may not see is left out before counting and paging", project.ListQuery{Limit: 1, Offset: 1,
			Visible: func(p *project.Project) bool { return p.Key != "a" }}, "c", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := r.svc.List(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, p := range res.Items {
				keys = append(keys, p.Key)
			}
			if got := strings.Join(keys, " "); got != c.want || res.TotalCount != c.total {
				t.Errorf("list %q of %d, want %q of %d", got, res.TotalCount, c.want, c.total)
			}
		})
	}
	t.Run("an unknown sort field is refused naming it", func(t *testing.T) {
		_, err := r.svc.List(ctx, project.ListQuery{Sort: "key"})
		faulttest.Want(t, err, fault.Invalid, `"key"`)
	})
}

func TestPatch(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	p := r.create(t, "p", "P")
	t.Run("a read-only field sent back as read is dropped and nothing is written", func(t *testing.T) {
		got, err := r.svc.Patch(ctx, "p", mustPatch(t, `[{"op":"replace","path":"/key","value":"p"},{"op":"replace","path":"/name","value":"P"}]`))
		if err != nil || got.Version != p.Version {
			t.Errorf("patched %+v, %v; want it unchanged", got, err)
		}
	})
	refused := []struct {
		name, body, part string
	}{
		{"a changed key is refused", `[{"op":"replace","path":"/key","value":"q"}]`, "key"},
		{"an empty name is refused naming the field", `[{"op":"replace","path":"/name","value":""}]`, `"name"`},
		{"a default release pipeline that does not exist is refused naming the field", `[{"op":"add","path":"/defaultReleasePipelineKey","value":"nope"}]`, `"defaultReleasePipelineKey"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Patch(ctx, "p", mustPatch(t, c.body))
			faulttest.Want(t, err, fault.Invalid, c.part)
		})
	}
	t.Run("two patches racing: one wins, the other gets a 409", func(t *testing.T) {
		names := []string{"First", "Second"}
		errs := r.table.Race(2, func(i int) error {
			_, err := r.svc.Patch(ctx, "p", mustPatch(t, `[{"op":"replace","path":"/name","value":"`+names[i]+`"}]`))
			return err
		})
		faulttest.OneWins(t, errs, fault.OptimisticLock)
		got, err := r.svc.Get(ctx, "p")
		if err != nil || got.Version != p.Version+1 {
			t.Errorf("project %+v, %v", got, err)
		}
	})
	t.Run("the default pipeline write lands only on the version it was made from", func(t *testing.T) {
		w, err := project.DefaultPipelineWrite(p, "pipe")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.table.Transact(ctx, []store.Write{w}); !errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("a write from a stale read: %v, want it refused", err)
		}
	})
	t.Run("only the changes that landed were recorded", func(t *testing.T) {
		if a := strings.Join(audittest.Actions(t, r.log, "project"), " "); a != "createProject updateProjectName" {
			t.Errorf("audit actions %q", a)
		}
	})
}
