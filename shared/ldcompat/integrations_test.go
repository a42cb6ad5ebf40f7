package ldcompat_test

import (
	"net/http"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// The integrations group (registered from shared/integration/integrationapi)
// in the tier: a Datadog configuration (its host is fixed, so nothing
// resolves a name) made, read, listed, renamed and deleted through
// LaunchDarkly's IntegrationsBetaApi.

const capabilityString = "spec 2.9: an integration configuration's capabilityConfig is a JSON-encoded string; LaunchDarkly's model has an object (CapabilityConfigRep)"

var integrationOps = []string{"getAllIntegrationConfigurations", "createIntegrationConfiguration", "getIntegrationConfiguration", "updateIntegrationConfiguration", "deleteIntegrationConfiguration"}

func init() {
	groupSteps = append(groupSteps, integrationSteps)
	deviations = append(deviations,
		deviation{[]string{"createIntegrationConfiguration", "getIntegrationConfiguration", "updateIntegrationConfiguration"}, "capabilityConfig", capabilityString},
		deviation{[]string{"getAllIntegrationConfigurations"}, "items[].capabilityConfig", capabilityString},
	)
}

func integrationSteps(tr *tier) {
	for _, op := range integrationOps {
		tr.built[op] = true
	}
	api, ctx := tr.ld.IntegrationsBetaApi, tr.ctx
	post := ldapi.IntegrationConfigurationPost{
		Name: "Datadog", Enabled: ptr(false), Tags: []string{"ops"},
		ConfigValues: map[string]any{"apiKey": "0123456789abcdef0123456789abcdef", "site": "datadoghq.eu"},
		CapabilityConfig: &ldapi.CapabilityConfigPost{AuditLogEventsHook: &ldapi.AuditLogEventsHookCapabilityConfigPost{
			Statements: []ldapi.StatementPost{{Effect: "allow", Resources: []string{"proj/*:env/*:flag/*"}, Actions: []string{"*"}}},
		}},
	}
	c := check(tr, "createIntegrationConfiguration", "create a Datadog events hook", http.StatusCreated, api.CreateIntegrationConfiguration(ctx, "datadog").IntegrationConfigurationPost(post).Execute)
	if c == nil || c.Id == "" {
		tr.note("getIntegrationConfiguration, updateIntegrationConfiguration, deleteIntegrationConfiguration skipped: the create gave no id")
		return
	}
	check(tr, "getAllIntegrationConfigurations", "list datadog", http.StatusOK, api.GetAllIntegrationConfigurations(ctx, "datadog").Execute)
	check(tr, "getIntegrationConfiguration", "get", http.StatusOK, api.GetIntegrationConfiguration(ctx, c.Id).Execute)
	check(tr, "updateIntegrationConfiguration", "rename and turn on", http.StatusOK, api.UpdateIntegrationConfiguration(ctx, c.Id).PatchOperation([]ldapi.PatchOperation{
		replace("/name", "Datadog EU"), replace("/enabled", true),
	}).Execute)
	checkEmpty(tr, "deleteIntegrationConfiguration", "delete", http.StatusNoContent, api.DeleteIntegrationConfiguration(ctx, c.Id).Execute)
}
