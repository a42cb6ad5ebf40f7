package ldcompat_test

import (
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// Segments in the tier, through LaunchDarkly's SegmentsApi: a list-based
// segment created, listed, patched by JSON patch and by semantic patch,
// matched by a flag (so `_flags` names it), given and cleared an expiring
// target; a big segment's targets changed, read, imported from a CSV file
// and exported; every segment's membership of one context evaluated; and a
// segment no flag uses deleted.

func init() {
	groupSteps = append(groupSteps, segmentSteps)
}

func segmentSteps(tr *tier) {
	const project, env = "ld-segments", "production"
	tr.srv.MustCreateProject(tr.t, project) // environments test and production
	ld, ctx := tr.ld, tr.ctx
	seg := ld.SegmentsApi
	body := ldapi.NewSegmentBody("Beta users", "beta-users")
	body.Description, body.Tags = ptr("opted in"), []string{"beta"}
	check(tr, "postSegment", "a list-based segment", http.StatusCreated, seg.PostSegment(ctx, project, env).SegmentBody(*body).Execute)
	check(tr, "postSegment", "a segment to delete", http.StatusCreated, seg.PostSegment(ctx, project, env).SegmentBody(*ldapi.NewSegmentBody("Short-lived", "short-lived")).Execute)
	check(tr, "getSegments", "the environment's segments with the tag, by name", http.StatusOK, seg.GetSegments(ctx, project, env).Filter("tags anyOf [\"beta\"]").Sort("name").Limit(10).Execute)
	check(tr, "patchSegment", "a JSON patch including a user", http.StatusOK, seg.PatchSegment(ctx, project, env, "beta-users").PatchWithComment(ldapi.PatchWithComment{
		Comment: ptr("first testers"), Patch: []ldapi.PatchOperation{replace("/description", "early access"), {Op: "add", Path: "/included/-", Value: "alice"}},
	}).Execute)
	check(tr, "patchSegment", "a semantic patch including an organization and adding a rule", http.StatusOK,
		send[ldapi.UserSegment](tr, http.MethodPatch, "/api/v2/segments/"+project+"/"+env+"/beta-users", semanticPatchType, map[string]any{
			"comment": "orgs and staff",
			"instructions": []map[string]any{
				{"kind": "addIncludedTargets", "contextKind": "organization", "values": []string{"acme"}},
				{"kind": "addRule", "clauses": []map[string]any{{"contextKind": "user", "attribute": "email", "op": "endsWith", "values": []string{"@example.com"}, "negate": false}}},
			},
		}))
	// A flag whose rule matches the segment: the segment's _flags names it.
	check(tr, "postFeatureFlag", "a flag for segment members", http.StatusCreated, ld.FeatureFlagsApi.PostFeatureFlag(ctx, project).FeatureFlagBody(ldapi.FeatureFlagBody{Key: "beta-ui", Name: "Beta UI"}).Execute)
	check(tr, "patchFeatureFlag", "a rule serving the segment", http.StatusOK, ld.FeatureFlagsApi.PatchFeatureFlag(ctx, project, "beta-ui").PatchWithComment(ldapi.PatchWithComment{Patch: []ldapi.PatchOperation{{
		Op: "add", Path: "/environments/" + env + "/rules/-",
		Value: map[string]any{"variation": 0, "clauses": []map[string]any{{"attribute": "segmentMatch", "op": "segmentMatch", "values": []string{"beta-users"}, "negate": false}}},
	}}}).Execute)
	if got := check(tr, "getSegment", "the segment with the flag using it", http.StatusOK, seg.GetSegment(ctx, project, env, "beta-users").Execute); got != nil && (len(got.Flags) != 1 || got.Flags[0].Key != "beta-ui") {
		tr.note("getSegment: _flags is %v, want the flag beta-ui", got.Flags)
		tr.calls[len(tr.calls)-1].fail("_flags is %v, want [beta-ui]", got.Flags)
	}

	// Expiring targets: alice leaves the segment tomorrow, then stays after all.
	tomorrow := time.Now().Add(24 * time.Hour).UnixMilli()
	expire := ldapi.NewPatchSegmentExpiringTargetInstruction("addExpiringTarget", "alice", "user", "included")
	expire.Value = &tomorrow
	check(tr, "patchExpiringTargetsForSegment", "alice leaves tomorrow", http.StatusOK, seg.PatchExpiringTargetsForSegment(ctx, project, env, "beta-users").PatchSegmentExpiringTargetInputRep(*ldapi.NewPatchSegmentExpiringTargetInputRep([]ldapi.PatchSegmentExpiringTargetInstruction{*expire})).Execute)
	check(tr, "getExpiringTargetsForSegment", "the scheduled removal", http.StatusOK, seg.GetExpiringTargetsForSegment(ctx, project, env, "beta-users").Execute)
	check(tr, "getExpiringUserTargetsForSegment", "the scheduled removal, as users", http.StatusOK, seg.GetExpiringUserTargetsForSegment(ctx, project, env, "beta-users").Execute)
	// The client's user form carries the date as an int32, which no date in
	// milliseconds fits: the removal, which needs none, is what it can send.
	check(tr, "patchExpiringUserTargetsForSegment", "alice stays after all", http.StatusOK, seg.PatchExpiringUserTargetsForSegment(ctx, project, env, "beta-users").PatchSegmentRequest(*ldapi.NewPatchSegmentRequest([]ldapi.PatchSegmentInstruction{
		*ldapi.NewPatchSegmentInstruction("removeExpireUserTargetDate", "alice", "included"),
	})).Execute)

	bigSegmentSteps(tr, project, env)

	check(tr, "getContextInstanceSegmentsMembershipByEnv", "the segments alice is in", http.StatusOK, seg.GetContextInstanceSegmentsMembershipByEnv(ctx, project, env).RequestBody(map[string]any{"kind": "user", "key": "alice"}).Execute)
	checkEmpty(tr, "deleteSegment", "a segment no flag uses", http.StatusNoContent, seg.DeleteSegment(ctx, project, env, "short-lived").Execute)
}

// bigSegmentSteps drive a big segment's operations.
func bigSegmentSteps(tr *tier, project, env string) {
	ld, ctx := tr.ld, tr.ctx
	seg := ld.SegmentsApi
	body := ldapi.NewSegmentBody("Many users", "many-users")
	body.Unbounded, body.UnboundedContextKind = ptr(true), ptr("user")
	check(tr, "postSegment", "a big segment", http.StatusCreated, seg.PostSegment(ctx, project, env).SegmentBody(*body).Execute)
	checkEmpty(tr, "updateBigSegmentTargets", "two members in, one out", http.StatusNoContent, seg.UpdateBigSegmentTargets(ctx, project, env, "many-users").SegmentUserState(ldapi.SegmentUserState{
		Included: &ldapi.SegmentUserList{Add: []string{"bob", "carol"}}, Excluded: &ldapi.SegmentUserList{Add: []string{"mallory"}},
	}).Execute)
	checkEmpty(tr, "updateBigSegmentContextTargets", "one more member, by context key", http.StatusNoContent, seg.UpdateBigSegmentContextTargets(ctx, project, env, "many-users").SegmentUserState(ldapi.SegmentUserState{
		Included: &ldapi.SegmentUserList{Add: []string{"dave"}},
	}).Execute)
	check(tr, "getSegmentMembershipForUser", "bob is in", http.StatusOK, seg.GetSegmentMembershipForUser(ctx, project, env, "many-users", "bob").Execute)
	check(tr, "getSegmentMembershipForContext", "mallory is out", http.StatusOK, seg.GetSegmentMembershipForContext(ctx, project, env, "many-users", "mallory").Execute)

	csv := filepath.Join(tr.t.TempDir(), "members.csv")
	var rows strings.Builder
	for i := range 50 {
		fmt.Fprintf(&rows, "imported-%03d\n", i)
	}
	if err := os.WriteFile(csv, []byte(rows.String()), 0o600); err != nil {
		tr.t.Fatal(err)
	}
	f, err := os.Open(csv)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer f.Close()
	var location string
	checkEmpty(tr, "createBigSegmentImport", "fifty members from a CSV file", http.StatusNoContent, func() (*http.Response, error) {
		res, err := seg.CreateBigSegmentImport(ctx, project, env, "many-users").File(f).Mode("merge").Execute()
		if res != nil {
			location = res.Header.Get("Location")
		}
		return res, err
	})
	if location == "" {
		tr.note("createBigSegmentImport: no Location header, so getBigSegmentImport is not driven")
	} else {
		check(tr, "getBigSegmentImport", "the import's progress", http.StatusOK, seg.GetBigSegmentImport(ctx, project, env, "many-users", path.Base(location)).Execute)
	}
	location = ""
	checkEmpty(tr, "createBigSegmentExport", "the members as a CSV file", http.StatusOK, func() (*http.Response, error) {
		res, err := seg.CreateBigSegmentExport(ctx, project, env, "many-users").Execute()
		if res != nil {
			location = res.Header.Get("Location")
		}
		return res, err
	})
	if location == "" {
		tr.note("createBigSegmentExport: no Location header, so getBigSegmentExport is not driven")
	} else {
		check(tr, "getBigSegmentExport", "the export and where to download it", http.StatusOK, seg.GetBigSegmentExport(ctx, project, env, "many-users", path.Base(location)).Execute)
	}
}
