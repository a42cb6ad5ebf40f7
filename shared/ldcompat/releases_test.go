package ldcompat_test

import (
	"net/http"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// A flag's release moving through its pipeline's phases in the tier, through
// LaunchDarkly's ReleasesBetaApi: a flag added to a two-phase pipeline, its
// first phase started then completed (updatePhaseStatus), the second marked
// complete with the legacy JSON patch, and the release deleted.

func init() {
	groupSteps = append(groupSteps, releaseSteps)
}

func releaseSteps(tr *tier) {
	const project, flag = "ld-releases", "released"
	tr.srv.MustCreateProject(tr.t, project) // environments test and production
	ld, ctx := tr.ld, tr.ctx
	phases := []ldapi.CreatePhaseInput{
		{Name: "Test", Audiences: []ldapi.AudiencePost{{EnvironmentKey: "test", Name: "Testers", Configuration: &ldapi.AudienceConfiguration{ReleaseStrategy: "monitoredRelease", RequireApproval: true}}}},
		{Name: "Production", Audiences: []ldapi.AudiencePost{{EnvironmentKey: "production", Name: "Everyone"}}},
	}
	check(tr, "postReleasePipeline", "a two-phase pipeline", http.StatusCreated, ld.ReleasePipelinesBetaApi.PostReleasePipeline(ctx, project).CreateReleasePipelineInput(ldapi.CreateReleasePipelineInput{Key: "two", Name: "Two phases", Phases: phases}).Execute)
	check(tr, "postFeatureFlag", "a flag to release", http.StatusCreated, ld.FeatureFlagsApi.PostFeatureFlag(ctx, project).FeatureFlagBody(ldapi.FeatureFlagBody{Key: flag, Name: "Released"}).Execute)
	rel := check(tr, "createReleaseForFlag", "add the flag to the pipeline", http.StatusOK, ld.ReleasesBetaApi.CreateReleaseForFlag(ctx, project, flag).CreateReleaseInput(ldapi.CreateReleaseInput{ReleasePipelineKey: "two"}).Execute)
	if rel == nil || len(rel.Phases) != 2 {
		tr.note("updatePhaseStatus, patchReleaseByFlagKey, deleteReleaseByFlagKey skipped: the release has no two phases")
		return
	}
	var audience string
	if len(rel.Phases[0].Audiences) > 0 {
		audience = rel.Phases[0].Audiences[0].Id
	}
	releases := ld.ReleasesBetaApi
	check(tr, "updatePhaseStatus", "start the first phase, notifying a team", http.StatusOK, releases.UpdatePhaseStatus(ctx, project, flag, rel.Phases[0].Id).UpdatePhaseStatusInput(ldapi.UpdatePhaseStatusInput{
		Status: ptr("active"), Audiences: []ldapi.ReleaserAudienceConfigInput{{AudienceId: ptr(audience), NotifyTeamKeys: []string{"devs"}}},
	}).Execute)
	check(tr, "updatePhaseStatus", "complete the first phase", http.StatusOK, releases.UpdatePhaseStatus(ctx, project, flag, rel.Phases[0].Id).UpdatePhaseStatusInput(ldapi.UpdatePhaseStatusInput{Status: ptr("completed")}).Execute)
	check(tr, "patchReleaseByFlagKey", "mark the second phase complete", http.StatusOK, releases.PatchReleaseByFlagKey(ctx, project, flag).PatchOperation([]ldapi.PatchOperation{replace("/phases/1/complete", true)}).Execute)
	check(tr, "getAllReleaseProgressionsForReleasePipeline", "the completed release", http.StatusOK, ld.ReleasePipelinesBetaApi.GetAllReleaseProgressionsForReleasePipeline(ctx, project, "two").Filter("status:completed").Execute)
	checkEmpty(tr, "deleteReleaseByFlagKey", "take the flag out of the pipeline", http.StatusNoContent, releases.DeleteReleaseByFlagKey(ctx, project, flag).Execute)
}
