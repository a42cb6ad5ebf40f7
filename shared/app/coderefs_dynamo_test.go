package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/coderefs"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
)

// TestCodeReferencesOnDynamoDB holds code references to DynamoDB's
// limits: an upload near the 1 MiB body limit is split under the 400 KB
// item size and read back whole; reads cost what the design says; two
// uploads of one branch at once make one 409, never a mixed branch.
func TestCodeReferencesOnDynamoDB(t *testing.T) {
	ctx := context.Background()
	table, counter := dynamotest.NewTable(t)
	s := coderefs.NewService(table, audit.New(table, audit.Discard{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now), nil, time.Now)
	if _, err := s.Create(ctx, coderefs.RepositoryInput{Name: "big"}); err != nil {
		t.Fatal(err)
	}
	ptr := func(v string) *string { return &v }
	sync0 := int64(1700000000000)
	upload := func(head string, files, lineBytes int, flags ...string) error {
		var refs []coderefs.Reference
		for i := range files {
			var hunks []coderefs.Hunk
			for j, f := range flags {
				hunks = append(hunks, coderefs.Hunk{StartingLineNumber: j + 1, Lines: strings.Repeat("x", lineBytes), ProjKey: "p", FlagKey: f})
			}
			refs = append(refs, coderefs.Reference{Path: fmt.Sprintf("src/file%03d.go", i), Hunks: hunks})
		}
		_, _, err := s.Upload(ctx, "big", "main", coderefs.BranchInput{Name: ptr("main"), Head: ptr(head), SyncTime: &sync0, References: refs})
		return err
	}

	t.Run("an upload of about 900 KB is stored in items under 400 KB and read back whole", func(t *testing.T) {
		if err := upload("c1", 30, 10_000, "alpha", "beta", "gamma"); err != nil {
			t.Fatal(err)
		}
		repo, err := s.Get(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		counter.Reset()
		b, err := s.Branch(ctx, repo, "main", "", "")
		if err != nil {
			t.Fatal(err)
		}
		if b.Chunks < 3 || len(b.References) != 30 || len(b.References[29].Hunks[2].Lines) != 10_000 {
			t.Fatalf("read %d chunks, %d references", b.Chunks, len(b.References))
		}
		if got := counter.Counts(); got["GetItem"] != 1+b.Chunks || len(got) != 1 {
			t.Errorf("a branch read made %v, want %d GetItem (its summary and each chunk)", got, 1+b.Chunks)
		}
	})

	t.Run("a smaller upload drops the extra chunks and records the flags it lost", func(t *testing.T) {
		if err := upload("c2", 2, 10, "alpha"); err != nil {
			t.Fatal(err)
		}
		counter.Reset()
		found, err := s.Extinctions(ctx, coderefs.ExtinctionQuery{Repo: "big"})
		if err != nil {
			t.Fatal(err)
		}
		if len(found["big"]) != 2 || found["big"][0].Revision != "c2" {
			t.Errorf("extinctions %+v, want beta and gamma at c2", found)
		}
		if got := counter.Counts(); got["GetItem"] != 1 || got["Query"] != 1 || got["Scan"] != 0 {
			t.Errorf("listing one repository's extinctions made %v, want one GetItem and one Query", got)
		}
		repo, _ := s.Get(ctx, "big")
		b, err := s.Branch(ctx, repo, "main", "", "")
		if err != nil || b.Chunks != 1 || len(b.References) != 2 {
			t.Fatalf("after the small upload: %+v %v", b, err)
		}
	})

	t.Run("uploads of one branch at once: each lands whole or gets a 409", func(t *testing.T) {
		const writers = 4
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = upload(fmt.Sprintf("w%d", i), 3, 100, "alpha")
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !fault.Is(err, fault.OptimisticLock):
				t.Errorf("a losing upload: %v, want optimistic_locking_error", err)
			}
		}
		repo, _ := s.Get(ctx, "big")
		b, err := s.Branch(ctx, repo, "main", "", "")
		if ok == 0 || err != nil || len(b.References) != 3 || !strings.HasPrefix(b.Head, "w") {
			t.Errorf("%d uploads won; branch %+v %v", ok, b, err)
		}
	})
}
