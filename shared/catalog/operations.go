package catalog

// operations is the full catalog, listed group by group. IDs, methods and paths are
// those of the reference API (LaunchDarkly REST API v2) unless a group comment says
// otherwise; each group comment names the sections of the spec it serves.
var operations = []Operation{
	// projects: the containers of part 1 ("environments inside projects"); reference CRUD.
	{ID: "getProjects", Group: "projects", Method: "GET", Path: "/api/v2/projects", Scope: Read},
	{ID: "postProject", Group: "projects", Method: "POST", Path: "/api/v2/projects", Scope: Write},
	{ID: "getProject", Group: "projects", Method: "GET", Path: "/api/v2/projects/{projectKey}", Scope: Read},
	{ID: "patchProject", Group: "projects", Method: "PATCH", Path: "/api/v2/projects/{projectKey}", Scope: Write},
	{ID: "deleteProject", Group: "projects", Method: "DELETE", Path: "/api/v2/projects/{projectKey}", Scope: Write},

	// environments: spec 4.3 and 4.23 "Update environment"; plus delete and the SDK key resets.
	{ID: "getEnvironmentsByProject", Group: "environments", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments", Scope: Read},
	{ID: "postEnvironment", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments", Scope: Write},
	{ID: "getEnvironment", Group: "environments", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Read},
	{ID: "patchEnvironment", Group: "environments", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Write},
	{ID: "deleteEnvironment", Group: "environments", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Write},
	{ID: "resetEnvironmentSDKKey", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/apiKey", Scope: Write},
	{ID: "resetEnvironmentMobileKey", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/mobileKey", Scope: Write},

	// flags: flag CRUD that approvals, contexts and expiring targets act on; spec 4.23
	// "Update expiring user target for flags". The per-user expiring-target routes live
	// under /users but edit flag targeting, so they stay with flags. The reference marks
	// getExpiringFlagsForUser and patchExpiringFlagsForUser deprecated; both are kept.
	{ID: "getFeatureFlags", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}", Scope: Read},
	{ID: "postFeatureFlag", Group: "flags", Method: "POST", Path: "/api/v2/flags/{projectKey}", Scope: Write},
	{ID: "getFeatureFlag", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Read},
	{ID: "patchFeatureFlag", Group: "flags", Method: "PATCH", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Write},
	{ID: "deleteFeatureFlag", Group: "flags", Method: "DELETE", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Write},
	{ID: "getExpiringUserTargets", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}/expiring-user-targets/{environmentKey}", Scope: Read},
	{ID: "patchExpiringUserTargets", Group: "flags", Method: "PATCH", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}/expiring-user-targets/{environmentKey}", Scope: Write},
	{ID: "getExpiringFlagsForUser", Group: "flags", Method: "GET", Path: "/api/v2/users/{projectKey}/{userKey}/expiring-user-targets/{environmentKey}", Scope: Read},
	{ID: "patchExpiringFlagsForUser", Group: "flags", Method: "PATCH", Path: "/api/v2/users/{projectKey}/{userKey}/expiring-user-targets/{environmentKey}", Scope: Write},

	// approvals: spec 4.6 and 4.23 "List approval requests", "Get approval request".
	// Judgement call: only patchApprovalRequest is beta, because the reference tags it
	// "Approvals (beta)" while the rest of the family is tagged "Approvals".
	{ID: "getApprovalRequests", Group: "approvals", Method: "GET", Path: "/api/v2/approval-requests", Scope: Read},
	{ID: "postApprovalRequest", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests", Scope: Write},
	{ID: "getApprovalRequest", Group: "approvals", Method: "GET", Path: "/api/v2/approval-requests/{id}", Scope: Read},
	{ID: "patchApprovalRequest", Group: "approvals", Method: "PATCH", Path: "/api/v2/approval-requests/{id}", Beta: true, Scope: Write},
	{ID: "deleteApprovalRequest", Group: "approvals", Method: "DELETE", Path: "/api/v2/approval-requests/{id}", Scope: Write},
	{ID: "postApprovalRequestReview", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests/{id}/reviews", Scope: Write},
	{ID: "postApprovalRequestApply", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests/{id}/apply", Scope: Write},

	// release-policies: spec 4.1; beta (spec 9.2; the reference requires the version header).
	// The reference spells these ids with a capital first letter; kept verbatim.
	{ID: "GetReleasePolicies", Group: "release-policies", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-policies", Beta: true, Scope: Read},
	{ID: "PostReleasePolicy", Group: "release-policies", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-policies", Beta: true, Scope: Write},
	{ID: "PostReleasePoliciesOrder", Group: "release-policies", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-policies/order", Beta: true, Scope: Write},
	{ID: "GetReleasePolicy", Group: "release-policies", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Read},
	{ID: "PutReleasePolicy", Group: "release-policies", Method: "PUT", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Write},
	{ID: "DeleteReleasePolicy", Group: "release-policies", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Write},

	// release-pipelines: spec 4.7; beta (spec 9.2 and reference).
	{ID: "getAllReleasePipelines", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines", Beta: true, Scope: Read},
	{ID: "postReleasePipeline", Group: "release-pipelines", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-pipelines", Beta: true, Scope: Write},
	{ID: "getReleasePipelineByKey", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Read},
	{ID: "putReleasePipeline", Group: "release-pipelines", Method: "PUT", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Write},
	{ID: "deleteReleasePipeline", Group: "release-pipelines", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Write},
	{ID: "getAllReleaseProgressionsForReleasePipeline", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}/releases", Beta: true, Scope: Read},

	// contexts: spec 4.5 and 4.23 "Search for contexts", "Evaluate flags for context instance".
	// Search and evaluate are POSTs that store nothing, so they need only read scope.
	{ID: "getContextKindsByProjectKey", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/context-kinds", Scope: Read},
	{ID: "putContextKind", Group: "contexts", Method: "PUT", Path: "/api/v2/projects/{projectKey}/context-kinds/{key}", Scope: Write},
	{ID: "getContextAttributeNames", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-attributes", Scope: Read},
	{ID: "getContextAttributeValues", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-attributes/{attributeName}", Scope: Read},
	{ID: "getContextInstances", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/{id}", Scope: Read},
	{ID: "deleteContextInstances", Group: "contexts", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/{id}", Scope: Write},
	{ID: "searchContextInstances", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/search", Scope: Read},
	{ID: "getContexts", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/contexts/{kind}/{key}", Scope: Read},
	{ID: "searchContexts", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/contexts/search", Scope: Read},
	{ID: "evaluateContextInstance", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/flags/evaluate", Scope: Read},

	// integrations: spec 4.8 (integration configurations); beta (spec 9.2 and reference).
	{ID: "getAllIntegrationConfigurations", Group: "integrations", Method: "GET", Path: "/api/v2/integration-configurations/keys/{integrationKey}", Beta: true, Scope: Read},
	{ID: "createIntegrationConfiguration", Group: "integrations", Method: "POST", Path: "/api/v2/integration-configurations/keys/{integrationKey}", Beta: true, Scope: Write},
	{ID: "getIntegrationConfiguration", Group: "integrations", Method: "GET", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Read},
	{ID: "updateIntegrationConfiguration", Group: "integrations", Method: "PATCH", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Write},
	{ID: "deleteIntegrationConfiguration", Group: "integrations", Method: "DELETE", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Write},

	// delivery-configurations: spec 4.11 and 4.23 "Validate delivery configuration" (feature
	// store capability); beta (spec 9.2 and reference). Validate stores nothing: read scope.
	{ID: "getIntegrationDeliveryConfigurations", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore", Beta: true, Scope: Read},
	{ID: "getIntegrationDeliveryConfigurationByEnvironment", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}", Beta: true, Scope: Read},
	{ID: "createIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "POST", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}", Beta: true, Scope: Write},
	{ID: "getIntegrationDeliveryConfigurationById", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Read},
	{ID: "patchIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "PATCH", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Write},
	{ID: "deleteIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "DELETE", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Write},
	{ID: "validateIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "POST", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}/validate", Beta: true, Scope: Read},

	// big-segments: spec 4.20 and 4.23 "Create/Update big segment store integration"
	// (persistent store capability); beta per the reference.
	{ID: "getBigSegmentStoreIntegrations", Group: "big-segments", Method: "GET", Path: "/api/v2/integration-capabilities/big-segment-store", Beta: true, Scope: Read},
	{ID: "createBigSegmentStoreIntegration", Group: "big-segments", Method: "POST", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}", Beta: true, Scope: Write},
	{ID: "getBigSegmentStoreIntegration", Group: "big-segments", Method: "GET", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Read},
	{ID: "patchBigSegmentStoreIntegration", Group: "big-segments", Method: "PATCH", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write},
	{ID: "deleteBigSegmentStoreIntegration", Group: "big-segments", Method: "DELETE", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write},

	// flag-imports: spec 4.18 and 4.23 "Create flag import configuration"; beta per the reference.
	{ID: "getFlagImportConfigurations", Group: "flag-imports", Method: "GET", Path: "/api/v2/integration-capabilities/flag-import", Beta: true, Scope: Read},
	{ID: "createFlagImportConfiguration", Group: "flag-imports", Method: "POST", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}", Beta: true, Scope: Write},
	{ID: "getFlagImportConfiguration", Group: "flag-imports", Method: "GET", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Read},
	{ID: "patchFlagImportConfiguration", Group: "flag-imports", Method: "PATCH", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write},
	{ID: "deleteFlagImportConfiguration", Group: "flag-imports", Method: "DELETE", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write},
	{ID: "triggerFlagImportJob", Group: "flag-imports", Method: "POST", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}/trigger", Beta: true, Scope: Write},

	// destinations: spec 4.16 and 4.23 "Generate warehouse destination key pair/setup script".
	// The reference names the path parameters projKey/envKey on the /projects/ routes and
	// projectKey/environmentKey elsewhere; both kept verbatim. The generate operations are
	// write scope: they create and keep key material or setup state (201 and 409 in the
	// reference; complete-setup reads the stored configuration).
	{ID: "getDestinations", Group: "destinations", Method: "GET", Path: "/api/v2/destinations", Scope: Read},
	{ID: "postDestination", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/{projectKey}/{environmentKey}", Scope: Write},
	{ID: "getDestination", Group: "destinations", Method: "GET", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Read},
	{ID: "patchDestination", Group: "destinations", Method: "PATCH", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Write},
	{ID: "deleteDestination", Group: "destinations", Method: "DELETE", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Write},
	{ID: "postGenerateWarehouseDestinationKeyPair", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/generate-warehouse-destination-key-pair", Scope: Write},
	{ID: "postGenerateProjectEnvWarehouseDestinationKeyPair", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/generate-warehouse-destination-key-pair", Scope: Write},
	{ID: "postGenerateTrustPolicy", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/generate-trust-policy", Scope: Write},
	{ID: "postGenerateWarehouseDestinationSetupScript", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/kinds/{kind}/setup", Scope: Write},
	{ID: "postCompleteWarehouseDestinationSetup", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/kinds/{kind}/complete-setup", Scope: Write},

	// webhooks: spec 4.21.
	{ID: "getAllWebhooks", Group: "webhooks", Method: "GET", Path: "/api/v2/webhooks", Scope: Read},
	{ID: "postWebhook", Group: "webhooks", Method: "POST", Path: "/api/v2/webhooks", Scope: Write},
	{ID: "getWebhook", Group: "webhooks", Method: "GET", Path: "/api/v2/webhooks/{id}", Scope: Read},
	{ID: "patchWebhook", Group: "webhooks", Method: "PATCH", Path: "/api/v2/webhooks/{id}", Scope: Write},
	{ID: "deleteWebhook", Group: "webhooks", Method: "DELETE", Path: "/api/v2/webhooks/{id}", Scope: Write},

	// tokens: spec 4.9 (access tokens).
	{ID: "getTokens", Group: "tokens", Method: "GET", Path: "/api/v2/tokens", Scope: Read},
	{ID: "postToken", Group: "tokens", Method: "POST", Path: "/api/v2/tokens", Scope: Write},
	{ID: "getToken", Group: "tokens", Method: "GET", Path: "/api/v2/tokens/{id}", Scope: Read},
	{ID: "patchToken", Group: "tokens", Method: "PATCH", Path: "/api/v2/tokens/{id}", Scope: Write},
	{ID: "deleteToken", Group: "tokens", Method: "DELETE", Path: "/api/v2/tokens/{id}", Scope: Write},
	{ID: "resetToken", Group: "tokens", Method: "POST", Path: "/api/v2/tokens/{id}/reset", Scope: Write},

	// oauth-clients: spec 4.2 (OAuth 2.0 clients).
	{ID: "getOAuthClients", Group: "oauth-clients", Method: "GET", Path: "/api/v2/oauth/clients", Scope: Read},
	{ID: "createOAuth2Client", Group: "oauth-clients", Method: "POST", Path: "/api/v2/oauth/clients", Scope: Write},
	{ID: "getOAuthClientById", Group: "oauth-clients", Method: "GET", Path: "/api/v2/oauth/clients/{clientId}", Scope: Read},
	{ID: "patchOAuthClient", Group: "oauth-clients", Method: "PATCH", Path: "/api/v2/oauth/clients/{clientId}", Scope: Write},
	{ID: "deleteOAuthClient", Group: "oauth-clients", Method: "DELETE", Path: "/api/v2/oauth/clients/{clientId}", Scope: Write},

	// members: account members named by approval notify lists and token owners; reference CRUD.
	{ID: "getMembers", Group: "members", Method: "GET", Path: "/api/v2/members", Scope: Read},
	{ID: "postMembers", Group: "members", Method: "POST", Path: "/api/v2/members", Scope: Write},
	{ID: "getMember", Group: "members", Method: "GET", Path: "/api/v2/members/{id}", Scope: Read},
	{ID: "patchMember", Group: "members", Method: "PATCH", Path: "/api/v2/members/{id}", Scope: Write},
	{ID: "deleteMember", Group: "members", Method: "DELETE", Path: "/api/v2/members/{id}", Scope: Write},

	// teams: teams named by approval notify lists; reference CRUD.
	{ID: "getTeams", Group: "teams", Method: "GET", Path: "/api/v2/teams", Scope: Read},
	{ID: "postTeam", Group: "teams", Method: "POST", Path: "/api/v2/teams", Scope: Write},
	{ID: "getTeam", Group: "teams", Method: "GET", Path: "/api/v2/teams/{teamKey}", Scope: Read},
	{ID: "patchTeam", Group: "teams", Method: "PATCH", Path: "/api/v2/teams/{teamKey}", Scope: Write},
	{ID: "deleteTeam", Group: "teams", Method: "DELETE", Path: "/api/v2/teams/{teamKey}", Scope: Write},

	// roles: custom roles granted to tokens and members; reference CRUD.
	{ID: "getCustomRoles", Group: "roles", Method: "GET", Path: "/api/v2/roles", Scope: Read},
	{ID: "postCustomRole", Group: "roles", Method: "POST", Path: "/api/v2/roles", Scope: Write},
	{ID: "getCustomRole", Group: "roles", Method: "GET", Path: "/api/v2/roles/{customRoleKey}", Scope: Read},
	{ID: "patchCustomRole", Group: "roles", Method: "PATCH", Path: "/api/v2/roles/{customRoleKey}", Scope: Write},
	{ID: "deleteCustomRole", Group: "roles", Method: "DELETE", Path: "/api/v2/roles/{customRoleKey}", Scope: Write},

	// applications: spec 4.10; beta (spec 9.2 and reference).
	{ID: "getApplications", Group: "applications", Method: "GET", Path: "/api/v2/applications", Beta: true, Scope: Read},
	{ID: "getApplication", Group: "applications", Method: "GET", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Read},
	{ID: "patchApplication", Group: "applications", Method: "PATCH", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Write},
	{ID: "deleteApplication", Group: "applications", Method: "DELETE", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Write},
	{ID: "getApplicationVersions", Group: "applications", Method: "GET", Path: "/api/v2/applications/{applicationKey}/versions", Beta: true, Scope: Read},
	{ID: "patchApplicationVersion", Group: "applications", Method: "PATCH", Path: "/api/v2/applications/{applicationKey}/versions/{versionKey}", Beta: true, Scope: Write},
	{ID: "deleteApplicationVersion", Group: "applications", Method: "DELETE", Path: "/api/v2/applications/{applicationKey}/versions/{versionKey}", Beta: true, Scope: Write},

	// ai-configs: spec 4.12 (AI Config variation); AI Configs, their variations and model
	// configs (4.12 checks modelConfigKey/modelConfigVersion). Not beta: the reference tags
	// them "AgentControl" without beta. The reference has no list-variations route. Left
	// out on purpose: the reference routes GET .../ai-configs/{configKey}/targeting|metrics
	// and .../ai-configs/prompt-snippets/{snippetKey} overlap GET
	// .../ai-configs/model-configs/{modelConfigKey} (or the variation routes) with neither
	// pattern more specific, which net/http.ServeMux rejects with a panic.
	{ID: "getAIConfigs", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs", Scope: Read},
	{ID: "postAIConfig", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs", Scope: Write},
	{ID: "getAIConfig", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Read},
	{ID: "patchAIConfig", Group: "ai-configs", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Write},
	{ID: "deleteAIConfig", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Write},
	{ID: "postAIConfigVariation", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations", Scope: Write},
	{ID: "getAIConfigVariation", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Read},
	{ID: "patchAIConfigVariation", Group: "ai-configs", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Write},
	{ID: "deleteAIConfigVariation", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Write},
	{ID: "listModelConfigs", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs", Scope: Read},
	{ID: "postModelConfig", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs", Scope: Write},
	{ID: "getModelConfig", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs/{modelConfigKey}", Scope: Read},
	{ID: "deleteModelConfig", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs/{modelConfigKey}", Scope: Write},

	// adaptive-triggers: spec 4.14. The reference has no adaptive-trigger routes at all, so the
	// path is the spec's and every id here is named by us in the reference style; the
	// collection routes (list, create) and patch/delete on the item are our additions. Not beta:
	// spec 9.2 does not label them.
	{ID: "getAdaptiveTriggers", Group: "adaptive-triggers", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers", Scope: Read},
	{ID: "postAdaptiveTrigger", Group: "adaptive-triggers", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers", Scope: Write},
	{ID: "getAdaptiveTrigger", Group: "adaptive-triggers", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Read},
	{ID: "patchAdaptiveTrigger", Group: "adaptive-triggers", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Write},
	{ID: "deleteAdaptiveTrigger", Group: "adaptive-triggers", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Write},

	// insights: spec 4.4 (insight groups), 4.15 (repositories), 4.22 (flag events) and 4.23
	// "Update deployment", plus scores and deployment events; beta (spec 9.2 and reference).
	{ID: "getInsightsScores", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/scores", Beta: true, Scope: Read},
	{ID: "createInsightGroup", Group: "insights", Method: "POST", Path: "/api/v2/engineering-insights/insights/group", Beta: true, Scope: Write},
	{ID: "getInsightGroups", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/groups", Beta: true, Scope: Read},
	{ID: "getInsightGroup", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Read},
	{ID: "patchInsightGroup", Group: "insights", Method: "PATCH", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Write},
	{ID: "deleteInsightGroup", Group: "insights", Method: "DELETE", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Write},
	{ID: "getInsightsRepositories", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/repositories", Beta: true, Scope: Read},
	{ID: "associateRepositoriesAndProjects", Group: "insights", Method: "PUT", Path: "/api/v2/engineering-insights/repositories/projects", Beta: true, Scope: Write},
	{ID: "deleteRepositoryProject", Group: "insights", Method: "DELETE", Path: "/api/v2/engineering-insights/repositories/{repositoryKey}/projects/{projectKey}", Beta: true, Scope: Write},
	{ID: "getFlagEvents", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/flag-events", Beta: true, Scope: Read},
	{ID: "getDeployments", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/deployments", Beta: true, Scope: Read},
	{ID: "getDeployment", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/deployments/{deploymentID}", Beta: true, Scope: Read},
	{ID: "updateDeployment", Group: "insights", Method: "PATCH", Path: "/api/v2/engineering-insights/deployments/{deploymentID}", Beta: true, Scope: Write},
	{ID: "createDeploymentEvent", Group: "insights", Method: "POST", Path: "/api/v2/engineering-insights/deployment-events", Beta: true, Scope: Write},

	// code-refs: spec 4.23 "List extinctions" and part 6.2; extinctions are created from the
	// code reference repositories and branches, so that family comes along (statistics left out).
	{ID: "getExtinctions", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/extinctions", Scope: Read},
	{ID: "getRepositories", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories", Scope: Read},
	{ID: "postRepository", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories", Scope: Write},
	{ID: "getRepository", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Read},
	{ID: "patchRepository", Group: "code-refs", Method: "PATCH", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Write},
	{ID: "deleteRepository", Group: "code-refs", Method: "DELETE", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Write},
	{ID: "getBranches", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}/branches", Scope: Read},
	{ID: "getBranch", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}", Scope: Read},
	{ID: "putBranch", Group: "code-refs", Method: "PUT", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}", Scope: Write},
	{ID: "deleteBranches", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories/{repo}/branch-delete-tasks", Scope: Write},
	{ID: "postExtinction", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}/extinction-events", Scope: Write},

	// auditlog: spec 4.19 and 4.23 "Get audit log entry counts". Search and counts are POSTs
	// that store nothing: read scope.
	{ID: "getAuditLogEntries", Group: "auditlog", Method: "GET", Path: "/api/v2/auditlog", Scope: Read},
	{ID: "postAuditLogEntries", Group: "auditlog", Method: "POST", Path: "/api/v2/auditlog", Scope: Read},
	{ID: "getAuditLogEntry", Group: "auditlog", Method: "GET", Path: "/api/v2/auditlog/{id}", Scope: Read},
	{ID: "postAuditLogEntryCounts", Group: "auditlog", Method: "POST", Path: "/api/v2/auditlog/counts", Scope: Read},

	// usage: spec 4.17 and 4.23 (observability traces, SDK versions details, AI runs, MAU
	// clientside), plus every other read-only usage route of the reference. Beta because the
	// reference tags the family "Account usage (beta)". getMauUsage and getMauUsageByCategory
	// are deprecated in the reference; kept.
	{ID: "getAIRunsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/ai-runs", Beta: true, Scope: Read},
	{ID: "getContextsClientsideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/clientside-contexts", Beta: true, Scope: Read},
	{ID: "getMAUClientsideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/clientside-mau", Beta: true, Scope: Read},
	{ID: "getDataExportEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/data-export-events", Beta: true, Scope: Read},
	{ID: "getEvaluationsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/evaluations/{projectKey}/{environmentKey}/{featureFlagKey}", Beta: true, Scope: Read},
	{ID: "getEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/events/{type}", Beta: true, Scope: Read},
	{ID: "getExperimentationEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/experimentation-events", Beta: true, Scope: Read},
	{ID: "getExperimentationKeysUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/experimentation-keys", Beta: true, Scope: Read},
	{ID: "getMauUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau", Beta: true, Scope: Read},
	{ID: "getMauUsageByCategory", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau/bycategory", Beta: true, Scope: Read},
	{ID: "getMauSdksByType", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau/sdks", Beta: true, Scope: Read},
	{ID: "getObservabilityErrorsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/errors", Beta: true, Scope: Read},
	{ID: "getObservabilityLogsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/logs", Beta: true, Scope: Read},
	{ID: "getObservabilityMetricsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/metrics", Beta: true, Scope: Read},
	{ID: "getObservabilitySessionsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/sessions", Beta: true, Scope: Read},
	{ID: "getObservabilityTracesUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/traces", Beta: true, Scope: Read},
	{ID: "getSdkAllVersions", Group: "usage", Method: "GET", Path: "/api/v2/usage/sdk-versions/all", Beta: true, Scope: Read},
	{ID: "getSdkVersionsDetails", Group: "usage", Method: "GET", Path: "/api/v2/usage/sdk-versions/details", Beta: true, Scope: Read},
	{ID: "getContextsServersideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/serverside-contexts", Beta: true, Scope: Read},
	{ID: "getServiceConnectionsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/service-connections", Beta: true, Scope: Read},
	{ID: "getStreamUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}", Beta: true, Scope: Read},
	{ID: "getStreamUsageBySdkVersion", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}/bysdkversion", Beta: true, Scope: Read},
	{ID: "getStreamUsageSdkversion", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}/sdkversions", Beta: true, Scope: Read},
	{ID: "getContextsTotalUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/total-contexts", Beta: true, Scope: Read},
	{ID: "getMAUTotalUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/total-mau", Beta: true, Scope: Read},
	{ID: "getVegaAIUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/vega-ai", Beta: true, Scope: Read},
	{ID: "getWarehouseExportUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/warehouse-export", Beta: true, Scope: Read},
}
