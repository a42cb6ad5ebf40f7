package ldcompat_test

import (
	"fmt"
	"net/http"
	"testing"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The main test leaves the code-refs operations to TestLaunchDarklyClientCodeRefs.
func init() {
	leaveToOwnTest("code-refs", "driven through the client's CodeReferencesApi by TestLaunchDarklyClientCodeRefs (coderefs_test.go), with its own coverage check")
}

// TestLaunchDarklyClientCodeRefs drives every operation of the code-refs
// group through the client's CodeReferencesApi, as a scanner and a reader
// of its results would, with the checks of the tier (status, route, decode
// into the client's models). It keeps its own coverage list: the group
// registers its handlers from its own package (app.Register), which the
// main test's list of built operations does not read.
func TestLaunchDarklyClientCodeRefs(t *testing.T) {
	srv := apptest.New(t)
	tr := newTier(t, srv)
	ld, ctx := tr.ld, tr.ctx
	group := groupOps("code-refs")
	for _, id := range group {
		tr.built[id] = true // so a 404 or 501 is a failure, not "not built yet"
	}

	const repo, proj, flagKey = "client-repo", "ld-client", "client-flag"
	check(tr, "postRepository", "create", http.StatusOK, ld.CodeReferencesApi.PostRepository(ctx).RepositoryPost(ldapi.RepositoryPost{
		Name: repo, SourceLink: ptr("https://git.example.com/client-repo"), Type: ptr("github"), DefaultBranch: ptr("main"),
	}).Execute)
	check(tr, "getRepository", "get", http.StatusOK, ld.CodeReferencesApi.GetRepository(ctx, repo).Execute)
	check(tr, "patchRepository", "hunk URL template", http.StatusOK, ld.CodeReferencesApi.PatchRepository(ctx, repo).PatchOperation([]ldapi.PatchOperation{
		replace("/hunkUrlTemplate", "https://git.example.com/client-repo/blob/${sha}/${filePath}#L${lineNumber}"),
	}).Execute)

	hunk := ldapi.HunkRep{StartingLineNumber: 12, Lines: ptr("if flags.on(\"client-flag\") {"), ProjKey: ptr(proj), FlagKey: ptr(flagKey), Aliases: []string{"clientFlag"}}
	upload := func(what, head string, refs []ldapi.ReferenceRep, seq int64) {
		checkEmpty(tr, "putBranch", what, http.StatusOK, ld.CodeReferencesApi.PutBranch(ctx, repo, "main").PutBranch(ldapi.PutBranch{
			Name: "main", Head: head, SyncTime: 1700000000000 + seq, UpdateSequenceId: ptr(seq), CommitTime: ptr(1699990000000 + seq), References: refs,
		}).Execute)
	}
	upload("upload with one reference", "c1", []ldapi.ReferenceRep{{Path: "app/main.go", Hint: ptr("go"), Hunks: []ldapi.HunkRep{hunk}}}, 1)
	checkEmpty(tr, "putBranch", "a feature branch", http.StatusOK, ld.CodeReferencesApi.PutBranch(ctx, repo, "feature/x").PutBranch(ldapi.PutBranch{
		Name: "feature/x", Head: "f1", SyncTime: 1700000000000,
	}).Execute)
	check(tr, "getBranches", "list", http.StatusOK, ld.CodeReferencesApi.GetBranches(ctx, repo).Execute)
	if b := check(tr, "getBranch", "get with a flag filter", http.StatusOK, ld.CodeReferencesApi.GetBranch(ctx, repo, "main").FlagKey(flagKey).Execute); b != nil {
		if len(b.References) != 1 || len(b.References[0].Hunks) != 1 || b.References[0].Hunks[0].StartingLineNumber != 12 {
			tr.note("getBranch: references %+v, want the one hunk uploaded", b.References)
			t.Errorf("getBranch answered references %+v, want the one hunk uploaded", b.References)
		}
	}
	check(tr, "getRepositories", "list with the default branch's references", http.StatusOK,
		ld.CodeReferencesApi.GetRepositories(ctx).WithReferencesForDefaultBranch("1").ProjKey(proj).Execute)
	upload("upload without the reference", "c2", nil, 2)
	checkEmpty(tr, "postExtinction", "the scanner's extinction", http.StatusOK, ld.CodeReferencesApi.PostExtinction(ctx, repo, "main").Extinction([]ldapi.Extinction{
		{Revision: "c2", Message: "Remove client-flag", Time: 1699990000002, FlagKey: flagKey, ProjKey: proj},
	}).Execute)
	if ext := check(tr, "getExtinctions", "by repository, project and time", http.StatusOK,
		ld.CodeReferencesApi.GetExtinctions(ctx).RepoName(repo).ProjKey(proj).From(1699990000000).To(1699990000009).Execute); ext != nil {
		if list := ext.Items[repo]; len(list) != 1 || list[0].Message != "Remove client-flag" || list[0].FlagKey != flagKey {
			t.Errorf("extinctions %+v, want client-flag's with the scanner's message", ext.Items)
		}
	}
	checkEmpty(tr, "deleteBranches", "the feature branch", http.StatusOK, ld.CodeReferencesApi.DeleteBranches(ctx, repo).RequestBody([]string{"feature/x"}).Execute)
	checkEmpty(tr, "deleteRepository", "delete", http.StatusNoContent, ld.CodeReferencesApi.DeleteRepository(ctx, repo).Execute)

	var deviating []string
	for _, c := range tr.calls {
		if len(c.deviations) > 0 {
			deviating = append(deviating, fmt.Sprintf("  %-18s %s: decode deviations %v (none are expected for code references)", c.op, c.what, c.deviations))
		}
	}
	tr.ownCheck(18, group, deviating...)
}
