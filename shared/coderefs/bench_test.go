package coderefs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/coderefs"
)

// benchRefs is an upload of files × flags hunks of five 60-byte lines each.
func benchRefs(files, flags int) []coderefs.Reference {
	lines := strings.TrimSuffix(strings.Repeat(strings.Repeat("x", 59)+"\n", 5), "\n")
	refs := make([]coderefs.Reference, files)
	for i := range refs {
		refs[i] = coderefs.Reference{Path: fmt.Sprintf("src/pkg%03d/file.go", i)}
		for f := range flags {
			refs[i].Hunks = append(refs[i].Hunks, coderefs.Hunk{StartingLineNumber: 10 * f, Lines: lines, ProjKey: "p", FlagKey: fmt.Sprintf("flag-%03d", f)})
		}
	}
	return refs
}

// BenchmarkUpload is one putBranch of 200 files × 10 flags (about 750 KB
// of JSON) on the embedded store: validation, counts, split, one commit.
func BenchmarkUpload(b *testing.B) {
	s, _ := newService(b)
	mustRepo(b, s, "bench")
	refs := benchRefs(200, 10)
	sync := int64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		head := fmt.Sprintf("c%d", i)
		if _, _, err := s.Upload(context.Background(), "bench", "main", coderefs.BranchInput{Name: ptr("main"), Head: &head, SyncTime: &sync, References: refs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBranchRead reads that branch back with its references.
func BenchmarkBranchRead(b *testing.B) {
	s, _ := newService(b)
	repo := mustRepo(b, s, "bench")
	sync := int64(1)
	if _, _, err := s.Upload(context.Background(), "bench", "main", coderefs.BranchInput{Name: ptr("main"), Head: ptr("c1"), SyncTime: &sync, References: benchRefs(200, 10)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if br, err := s.Branch(context.Background(), repo, "main", "", ""); err != nil || len(br.References) != 200 {
			b.Fatal(err)
		}
	}
}
