package flag_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// SemanticPatchWith as an approval request's apply uses it: the flag's
// change and the request's own write commit together or not at all.

func newService(t *testing.T) (*flag.Service, store.Table) {
	t.Helper()
	table, err := bolt.Open(filepath.Join(t.TempDir(), "flags.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = table.Close() })
	log := audit.New(table, audit.Discard{}, "acct", nil, time.Now)
	key, name := "p", "P"
	if _, _, err := project.NewService(table, log, time.Now).Create(context.Background(), project.Input{Key: &key, Name: &name}); err != nil {
		t.Fatalf("create project: %v", err)
	}
	s := flag.NewService(table, log, time.Now)
	fk, fn := "f", "F"
	if _, err := s.Create(context.Background(), "p", flag.Input{Key: &fk, Name: &fn}); err != nil {
		t.Fatalf("create flag: %v", err)
	}
	return s, table
}

// marker is an extra write that succeeds once: it creates an item that must not exist.
func marker() store.Write {
	return store.Put(store.Item{PK: "TEST", SK: "applied", Version: 1, Data: []byte(`{}`)}, store.IfNotExists())
}

func TestSemanticPatchWith(t *testing.T) {
	ctx := context.Background()

	t.Run("of two patches joined to the same one-time write, exactly one changes the flag", func(t *testing.T) {
		s, _ := newService(t)
		sp := semanticpatch.Patch{EnvironmentKey: "production", Instructions: []semanticpatch.Instruction{
			semanticpatch.New("addTags", map[string]any{"values": []string{"applied"}}), semanticpatch.New("turnFlagOn", nil)}}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.SemanticPatchWith(ctx, "p", "f", sp, marker())
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case fault.Is(err, fault.Conflict):
			default:
				t.Errorf("error %v", err)
			}
		}
		d, err := s.Get(ctx, "p", "f")
		if err != nil {
			t.Fatal(err)
		}
		if won != 1 || d.Flag.Version != 2 || !d.Flag.EnvView("production").On {
			t.Errorf("%d won, flag version %d", won, d.Flag.Version)
		}
	})

	t.Run("a patch that changes nothing still commits the joined write", func(t *testing.T) {
		s, table := newService(t)
		sp := semanticpatch.Patch{EnvironmentKey: "production", Instructions: []semanticpatch.Instruction{semanticpatch.New("turnFlagOff", nil)}}
		if _, err := s.SemanticPatchWith(ctx, "p", "f", sp, marker()); err != nil {
			t.Fatalf("patch: %v", err)
		}
		if _, err := table.Get(ctx, store.Key{PK: "TEST", SK: "applied"}); err != nil {
			t.Errorf("the joined write is missing: %v", err)
		}
		if _, err := s.SemanticPatchWith(ctx, "p", "f", sp, marker()); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second apply: %v, want a conflict", err)
		}
	})
}
