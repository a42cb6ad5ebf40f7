package ldcompat_test

import (
	"net/http"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// The flag-imports group (registered from shared/flagimport/flagimportapi)
// in the tier, through LaunchDarkly's FlagImportConfigurationsBetaApi: a
// configuration that imports a project of this same server (its
// LaunchDarkly-compatible API, on loopback, which this server allows) into
// another, run once, then read, listed, renamed and deleted.

const flagImportTimes = "spec 2.18: a flag import configuration's lastImport is Unix ms as a JSON string; LaunchDarkly's FlagImportStatus has int64"

var flagImportOps = []string{"getFlagImportConfigurations", "createFlagImportConfiguration", "getFlagImportConfiguration",
	"patchFlagImportConfiguration", "deleteFlagImportConfiguration", "triggerFlagImportJob"}

func init() {
	groupSteps = append(groupSteps, flagImportSteps)
	deviations = append(deviations,
		deviation{[]string{"getFlagImportConfiguration", "patchFlagImportConfiguration"}, "_status.lastImport", flagImportTimes},
		deviation{[]string{"getFlagImportConfigurations"}, "items[]._status.lastImport", flagImportTimes},
	)
}

func flagImportSteps(tr *tier) {
	for _, op := range flagImportOps {
		tr.built[op] = true
	}
	api, ctx := tr.ld.FlagImportConfigurationsBetaApi, tr.ctx
	tr.srv.MustCreateProject(tr.t, "import-src")
	tr.srv.MustCreateProject(tr.t, "import-dst")
	if res := tr.srv.Do(tr.t, http.MethodPost, "/api/v2/flags/import-src", map[string]any{"key": "to-import", "name": "To import"}); res.Status != http.StatusCreated {
		tr.note("flag imports: the source flag was not made: %d %s", res.Status, res.Body)
	}
	post := ldapi.FlagImportConfigurationPost{Name: ptr("From import-src"), Tags: []string{"migration"}, Config: map[string]any{
		"baseUrl": tr.srv.URL, "apiKey": tr.srv.Token, "sourceProjectKey": "import-src", "ldTag": "imported"}}
	c := check(tr, "createFlagImportConfiguration", "create a launchdarkly import", http.StatusOK,
		api.CreateFlagImportConfiguration(ctx, "import-dst", "launchdarkly").FlagImportConfigurationPost(post).Execute)
	if c == nil || c.Id == "" {
		tr.note("the other flag import calls skipped: the create gave no id")
		return
	}
	checkEmpty(tr, "triggerFlagImportJob", "run the import", http.StatusCreated, api.TriggerFlagImportJob(ctx, "import-dst", "launchdarkly", c.Id).Execute)
	if got := check(tr, "getFlagImportConfiguration", "get after the run", http.StatusOK, api.GetFlagImportConfiguration(ctx, "import-dst", "launchdarkly", c.Id).Execute); got != nil &&
		got.Status.GetStatus() != "complete" {
		tr.note("flag imports: the run's status is %q, not complete", got.Status.GetStatus())
	}
	check(tr, "getFlagImportConfigurations", "list", http.StatusOK, api.GetFlagImportConfigurations(ctx).Execute)
	check(tr, "patchFlagImportConfiguration", "rename", http.StatusOK, api.PatchFlagImportConfiguration(ctx, "import-dst", "launchdarkly", c.Id).PatchOperation([]ldapi.PatchOperation{
		replace("/name", "Imported from import-src"),
	}).Execute)
	checkEmpty(tr, "deleteFlagImportConfiguration", "delete", http.StatusNoContent, api.DeleteFlagImportConfiguration(ctx, "import-dst", "launchdarkly", c.Id).Execute)
}
