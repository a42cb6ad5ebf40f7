package aiconfig

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func TestLatestKeepsTheHighestVersionOfEachVariation(t *testing.T) {
	got := latest([]*Variation{
		{Key: "b", Version: 1}, {Key: "a", Version: 1}, {Key: "b", Version: 3}, {Key: "a", Version: 2}, {Key: "b", Version: 2},
	})
	if len(got) != 2 || got[0].Key != "a" || got[0].Version != 2 || got[1].Key != "b" || got[1].Version != 3 {
		t.Errorf("want a@2 then b@3, got %+v %+v", got[0], got[len(got)-1])
	}
	if got := latest(nil); got == nil || len(got) != 0 {
		t.Errorf("no versions should give an empty list, got %v", got)
	}
}

func TestApplyState(t *testing.T) {
	yes, no := true, false
	str := func(s string) *string { return &s }
	cases := []struct {
		name    string
		from    string
		patch   VariationPatch
		want    string
		invalid bool
	}{
		{name: "archiving records when", from: StatePublished, patch: VariationPatch{State: str(StateArchived)}, want: StateArchived},
		{name: "published true publishes", from: StateArchived, patch: VariationPatch{Published: &yes}, want: StatePublished},
		{name: "published false archives", from: StatePublished, patch: VariationPatch{Published: &no}, want: StateArchived},
		{name: "state and published agreeing are taken", from: StateArchived, patch: VariationPatch{State: str(StatePublished), Published: &yes}, want: StatePublished},
		{name: "state and published disagreeing are refused", from: StatePublished, patch: VariationPatch{State: str(StateArchived), Published: &yes}, invalid: true},
		{name: "an unknown state is refused", from: StatePublished, patch: VariationPatch{State: str("draft")}, invalid: true},
		{name: "no state keeps the state", from: StateArchived, patch: VariationPatch{}, want: StateArchived},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &Variation{State: c.from, CreatedAt: 42}
			err := (&Service{}).applyState(v, c.patch)
			if c.invalid {
				if !fault.Is(err, fault.Invalid) {
					t.Fatalf("want invalid_request, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.State != c.want {
				t.Errorf("state %q, want %q", v.State, c.want)
			}
			if c.want != c.from {
				at := v.PublishedAt
				if c.want == StateArchived {
					at = v.ArchivedAt
				}
				if at == nil || *at != 42 {
					t.Errorf("the time of the change is not the version's createdAt: %v", at)
				}
			}
		})
	}
}

// projects is a Projects with every project present and no review required.
type projects struct{}

func (projects) Check(context.Context, string) error                    { return nil }
func (projects) ReviewRequired(context.Context, string) (string, error) { return "", nil }

// hookedTable runs afterScan once, just after the first query of a
// project's variations has been answered: another request landing between
// a delete's look for users and its write.
type hookedTable struct {
	store.Table
	afterScan func()
}

func (h *hookedTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := h.Table.Query(ctx, q)
	if q.SKPrefix == store.AIVariationsPrefix && h.afterScan != nil {
		run := h.afterScan
		h.afterScan = nil
		run()
	}
	return page, err
}

func newTestService(tb testing.TB) (*Service, *hookedTable) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "aiconfig.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	h := &hookedTable{Table: table}
	return NewService(h, audit.New(h, audit.Discard{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now), projects{}, time.Now), h
}

func TestAModelConfigDeleteLosesToAVariationStartingToUseIt(t *testing.T) {
	ctx := context.Background()
	svc, table := newTestService(t)
	for _, key := range []string{"old", "new"} {
		if _, err := svc.CreateModel(ctx, "p", ModelConfigInput{Key: key, Name: key, ID: key}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateConfig(ctx, "p", ConfigInput{Key: "c", Name: "C", DefaultVariation: &VariationInput{Key: "v", Name: "V", ModelConfigKey: "old"}}); err != nil {
		t.Fatal(err)
	}
	newKey := "new"
	table.afterScan = func() {
		if _, err := svc.PatchVariation(ctx, "p", "c", "v", VariationPatch{ModelConfigKey: &newKey}); err != nil {
			t.Errorf("the variation patch: %v", err)
		}
	}
	err := svc.DeleteModel(ctx, "p", "new")
	if !fault.Is(err, fault.OptimisticLock) {
		t.Fatalf("the delete should fail with a 409 as a variation started using the model config meanwhile, got %v", err)
	}
	if _, err := svc.GetModel(ctx, "p", "new"); err != nil {
		t.Errorf("the model config the variation uses is gone: %v", err)
	}
	if err := svc.DeleteModel(ctx, "p", "new"); !fault.Is(err, fault.Invalid) {
		t.Errorf("retried, the delete should be refused as the model config is in use, got %v", err)
	}
	if err := svc.DeleteModel(ctx, "p", "old"); err != nil {
		t.Errorf("the model config no longer used should go: %v", err)
	}
}
