package catalog

// Access control: Resource, Action and BodyActions.
//
// Resource is a LaunchDarkly-style resource specifier: segments kind/name joined by ":",
// the parents first. A name is a {param} of the path (spelled exactly as in the path), or
// "*"; only "integration" has a two-part name, <integrationKey>/<id>. The kinds:
//
//	proj, proj:env, proj:env:flag, proj:env:segment, proj:env:destination,
//	proj:env:adaptive-trigger, proj:env:integration (delivery and big segment stores),
//	proj:integration (flag imports), proj:release-pipeline, proj:release-policy,
//	proj:aiconfig, proj:ai-model-config, proj:context-kind, proj:insight-repository;
//	member, member:token, role, team, webhook, oauth-client, integration, application,
//	code-reference-repository, insight-group, deployment, and for account-level records
//	that no key names: insight (scores, flag events), usage, auditlog.
//
// Kinds and actions are LaunchDarkly's where it has them (aiconfig, ai-model-config,
// code-reference-repository, member/*:token/*, updateApiKey, createRole, ...); the others
// follow create<Kind>, update<Kind>, delete<Kind>.
//
//   - Creates and lists name the collection: the parent plus "*" (proj/{projectKey}:env/*,
//     proj/*, webhook/*, member/*:token/*, role/*), since the new key is in the body.
//   - A flag edited for every environment is proj/{projectKey}:env/*:flag/{featureFlagKey};
//     per-environment flag operations name their environment.
//   - Parents missing from the path are "*" and the handler narrows them: a token's member
//     (member/*:token/{id}), an integration configuration's key, and approval requests,
//     which act on the flag their resourceId names (proj/*:env/*:flag/*).
//   - Parts of a resource, as LaunchDarkly treats them, name their owner: contexts and
//     context instances their environment, AI Config variations their AI Config,
//     application versions their application, code reference branches and extinctions
//     their repository.
//
// Action: writes carry the policy action. Reads whose path has a project key carry
// viewProject on that project (proj/{projectKey}), on its environment when the path names
// one (proj/{projectKey}:env/{environmentKey}), or on the item itself when the item can be
// listed across projects or environments (a destination, a store, a flag import), so that a
// GET decides what an account-wide list shows. A read is decided along the resource's
// enclosing ones (api.MayView): a deny on the project or environment refuses it.
// Account-level reads carry no action (every role but no_access may make them). POSTs that
// store nothing (search, evaluate, counts, validate) are reads. BodyActions marks the
// JSON-patch and semantic-patch PATCHes, whose actions follow from the body (updateName,
// updateTags, ...); their Action is the fallback, update<Kind>. The AI Config PATCHes take
// a merge-style object and have the one action LaunchDarkly gives them.

// operations is the full catalog, listed group by group. IDs, methods and paths are
// those of the reference API (LaunchDarkly REST API v2) unless a group comment says
// otherwise; each group comment names the sections of the spec it serves.
var operations = []Operation{
	// projects: the containers of part 1 ("environments inside projects"); reference CRUD.
	{ID: "getProjects", Group: "projects", Method: "GET", Path: "/api/v2/projects", Scope: Read, Resource: "proj/*"},
	{ID: "postProject", Group: "projects", Method: "POST", Path: "/api/v2/projects", Scope: Write, Resource: "proj/*", Action: "createProject"},
	{ID: "getProject", Group: "projects", Method: "GET", Path: "/api/v2/projects/{projectKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "patchProject", Group: "projects", Method: "PATCH", Path: "/api/v2/projects/{projectKey}", Scope: Write, Resource: "proj/{projectKey}", Action: "updateProject", BodyActions: true},
	{ID: "deleteProject", Group: "projects", Method: "DELETE", Path: "/api/v2/projects/{projectKey}", Scope: Write, Resource: "proj/{projectKey}", Action: "deleteProject"},
	// The health check: no token, no resource; it rides with projects so it needs no
	// function, route integration or table grant of its own (any group reading the table would do).
	{ID: "getHealth", Group: "projects", Method: "GET", Path: "/healthz", Scope: Read, Public: true},
	// The OpenAPI document of this API (the reference's getOpenapiSpec): no token, like the
	// health check, whose function serves it.
	{ID: "getOpenapiSpec", Group: "projects", Method: "GET", Path: "/api/v2/openapi.json", Scope: Read, Public: true},

	// console: flagplane's web console, not the API (Console: out of the OpenAPI document
	// and the API's counts). No token: the page signs in and then calls the API as curl
	// would. Its file tree is fixed-depth (static/: index.html, console.css, js/*.js,
	// js/pages/*.js), so three one-segment routes serve it; the router has no greedy
	// parameter, and API Gateway's {name+} would catch what no file answers.
	{ID: "getConsolePage", Group: "console", Method: "GET", Path: "/", Scope: Read, Public: true, Console: true},
	{ID: "getConsoleFile", Group: "console", Method: "GET", Path: "/console/{file}", Scope: Read, Public: true, Console: true},
	{ID: "getConsoleScript", Group: "console", Method: "GET", Path: "/console/js/{file}", Scope: Read, Public: true, Console: true},
	{ID: "getConsolePageScript", Group: "console", Method: "GET", Path: "/console/js/pages/{file}", Scope: Read, Public: true, Console: true},

	// environments: spec 4.3 and 4.23 "Update environment"; plus delete and the SDK key resets.
	{ID: "getEnvironmentsByProject", Group: "environments", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "postEnvironment", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments", Scope: Write, Resource: "proj/{projectKey}:env/*", Action: "createEnvironment"},
	{ID: "getEnvironment", Group: "environments", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchEnvironment", Group: "environments", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "updateEnvironment", BodyActions: true},
	{ID: "deleteEnvironment", Group: "environments", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "deleteEnvironment"},
	{ID: "resetEnvironmentSDKKey", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/apiKey", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "updateApiKey"},
	{ID: "resetEnvironmentMobileKey", Group: "environments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/mobileKey", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "updateMobileKey"},

	// flags: flag CRUD that approvals, contexts and expiring targets act on; spec 4.23
	// "Update expiring user target for flags". The per-user expiring-target routes live
	// under /users but edit flag targeting, so they stay with flags. The reference marks
	// getExpiringFlagsForUser and patchExpiringFlagsForUser deprecated; both are kept.
	{ID: "getFeatureFlags", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "postFeatureFlag", Group: "flags", Method: "POST", Path: "/api/v2/flags/{projectKey}", Scope: Write, Resource: "proj/{projectKey}:env/*:flag/*", Action: "createFlag"},
	{ID: "getFeatureFlag", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "patchFeatureFlag", Group: "flags", Method: "PATCH", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{featureFlagKey}", Action: "updateFlag", BodyActions: true},
	{ID: "deleteFeatureFlag", Group: "flags", Method: "DELETE", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}", Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{featureFlagKey}", Action: "deleteFlag"},
	{ID: "getExpiringUserTargets", Group: "flags", Method: "GET", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}/expiring-user-targets/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchExpiringUserTargets", Group: "flags", Method: "PATCH", Path: "/api/v2/flags/{projectKey}/{featureFlagKey}/expiring-user-targets/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:flag/{featureFlagKey}", Action: "updateExpiringTargets", BodyActions: true},
	{ID: "getExpiringFlagsForUser", Group: "flags", Method: "GET", Path: "/api/v2/users/{projectKey}/{userKey}/expiring-user-targets/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchExpiringFlagsForUser", Group: "flags", Method: "PATCH", Path: "/api/v2/users/{projectKey}/{userKey}/expiring-user-targets/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:flag/*", Action: "updateExpiringTargets", BodyActions: true},

	// segments: the reference's Segments tag (the spec shows none). Segments are per
	// environment; big segment targets, imports and exports change or read membership
	// (updateIncluded, or updateExcluded when the body excludes: the group's needs say). An export writes no
	// segment, and a membership evaluation stores nothing: read scope, like search.
	{ID: "getSegments", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "postSegment", Group: "segments", Method: "POST", Path: "/api/v2/segments/{projectKey}/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/*", Action: "createSegment"},
	{ID: "getSegment", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchSegment", Group: "segments", Method: "PATCH", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateRules", BodyActions: true},
	{ID: "deleteSegment", Group: "segments", Method: "DELETE", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "deleteSegment"},
	{ID: "updateBigSegmentContextTargets", Group: "segments", Method: "POST", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/contexts", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateIncluded"},
	{ID: "getSegmentMembershipForContext", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/contexts/{contextKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "createBigSegmentExport", Group: "segments", Method: "POST", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/exports", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getBigSegmentExport", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/exports/{exportID}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "createBigSegmentImport", Group: "segments", Method: "POST", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/imports", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateIncluded"},
	{ID: "getBigSegmentImport", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/imports/{importID}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "updateBigSegmentTargets", Group: "segments", Method: "POST", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/users", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateIncluded"},
	{ID: "getSegmentMembershipForUser", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{environmentKey}/{segmentKey}/users/{userKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getExpiringTargetsForSegment", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{segmentKey}/expiring-targets/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchExpiringTargetsForSegment", Group: "segments", Method: "PATCH", Path: "/api/v2/segments/{projectKey}/{segmentKey}/expiring-targets/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateExpiringTargets", BodyActions: true},
	{ID: "getExpiringUserTargetsForSegment", Group: "segments", Method: "GET", Path: "/api/v2/segments/{projectKey}/{segmentKey}/expiring-user-targets/{environmentKey}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchExpiringUserTargetsForSegment", Group: "segments", Method: "PATCH", Path: "/api/v2/segments/{projectKey}/{segmentKey}/expiring-user-targets/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:segment/{segmentKey}", Action: "updateExpiringTargets", BodyActions: true},
	{ID: "getContextInstanceSegmentsMembershipByEnv", Group: "segments", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/segments/evaluate", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},

	// approvals: spec 4.6 and 4.23 "List approval requests", "Get approval request".
	// Judgement call: only patchApprovalRequest is beta, because the reference tags it
	// "Approvals (beta)" while the rest of the family is tagged "Approvals".
	{ID: "getApprovalRequests", Group: "approvals", Method: "GET", Path: "/api/v2/approval-requests", Scope: Read, Resource: "proj/*:env/*:flag/*"},
	{ID: "postApprovalRequest", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests", Scope: Write, Resource: "proj/*:env/*:flag/*", Action: "createApprovalRequest"},
	{ID: "getApprovalRequest", Group: "approvals", Method: "GET", Path: "/api/v2/approval-requests/{id}", Scope: Read, Resource: "proj/*:env/*:flag/*"},
	{ID: "patchApprovalRequest", Group: "approvals", Method: "PATCH", Path: "/api/v2/approval-requests/{id}", Beta: true, Scope: Write, Resource: "proj/*:env/*:flag/*", Action: "updateApprovalRequest", BodyActions: true},
	{ID: "deleteApprovalRequest", Group: "approvals", Method: "DELETE", Path: "/api/v2/approval-requests/{id}", Scope: Write, Resource: "proj/*:env/*:flag/*", Action: "deleteApprovalRequest"},
	{ID: "postApprovalRequestReview", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests/{id}/reviews", Scope: Write, Resource: "proj/*:env/*:flag/*", Action: "reviewApprovalRequest"},
	{ID: "postApprovalRequestApply", Group: "approvals", Method: "POST", Path: "/api/v2/approval-requests/{id}/apply", Scope: Write, Resource: "proj/*:env/*:flag/*", Action: "applyApprovalRequest"},

	// release-policies: spec 4.1; beta (spec 9.2; the reference requires the version header).
	// The reference spells these ids with a capital first letter; kept verbatim.
	{ID: "GetReleasePolicies", Group: "release-policies", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-policies", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "PostReleasePolicy", Group: "release-policies", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-policies", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-policy/*", Action: "createReleasePolicy"},
	{ID: "PostReleasePoliciesOrder", Group: "release-policies", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-policies/order", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-policy/*", Action: "updateReleasePolicyRank"},
	{ID: "GetReleasePolicy", Group: "release-policies", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "PutReleasePolicy", Group: "release-policies", Method: "PUT", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-policy/{policyKey}", Action: "updateReleasePolicy"},
	{ID: "DeleteReleasePolicy", Group: "release-policies", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/release-policies/{policyKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-policy/{policyKey}", Action: "deleteReleasePolicy"},

	// release-pipelines: spec 4.7; beta (spec 9.2 and reference).
	{ID: "getAllReleasePipelines", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "postReleasePipeline", Group: "release-pipelines", Method: "POST", Path: "/api/v2/projects/{projectKey}/release-pipelines", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-pipeline/*", Action: "createReleasePipeline"},
	{ID: "getReleasePipelineByKey", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "putReleasePipeline", Group: "release-pipelines", Method: "PUT", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-pipeline/{pipelineKey}", Action: "updateReleasePipeline"},
	{ID: "deleteReleasePipeline", Group: "release-pipelines", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:release-pipeline/{pipelineKey}", Action: "deleteReleasePipeline"},
	{ID: "getAllReleaseProgressionsForReleasePipeline", Group: "release-pipelines", Method: "GET", Path: "/api/v2/projects/{projectKey}/release-pipelines/{pipelineKey}/releases", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	// A flag enters a pipeline through its release (reference: createReleaseForFlag,
	// getReleaseByFlagKey; "Releases (beta)" there). The reference names no action for
	// adding a flag to a pipeline; "createRelease" is flagplane's.
	{ID: "createReleaseForFlag", Group: "release-pipelines", Method: "PUT", Path: "/api/v2/projects/{projectKey}/flags/{flagKey}/release", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{flagKey}", Action: "createRelease"},
	{ID: "getReleaseByFlagKey", Group: "release-pipelines", Method: "GET", Path: "/api/v2/flags/{projectKey}/{flagKey}/release", Beta: true, Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	// A release moves through its phases. updateReleasePhaseStatus is LaunchDarkly's flag
	// action for phase status updates; the legacy JSON patch marks the same phases complete
	// or incomplete, so it takes the same action (its only paths are /phases/{i}/complete:
	// BodyActions, as every JSON-patch PATCH, with that one action). The reference names no action for removing a release;
	// "deleteRelease" is flagplane's, the pair of createRelease.
	{ID: "updatePhaseStatus", Group: "release-pipelines", Method: "PUT", Path: "/api/v2/projects/{projectKey}/flags/{flagKey}/release/phases/{phaseId}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{flagKey}", Action: "updateReleasePhaseStatus"},
	{ID: "patchReleaseByFlagKey", Group: "release-pipelines", Method: "PATCH", Path: "/api/v2/flags/{projectKey}/{flagKey}/release", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{flagKey}", Action: "updateReleasePhaseStatus", BodyActions: true},
	{ID: "deleteReleaseByFlagKey", Group: "release-pipelines", Method: "DELETE", Path: "/api/v2/flags/{projectKey}/{flagKey}/release", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/*:flag/{flagKey}", Action: "deleteRelease"},

	// events: where LaunchDarkly's SDKs post their events (not part of the REST API v2, so
	// outside /api/v2; paths and payloads are the SDKs' own). Public: each authenticates its
	// caller by the environment's SDK key, mobile key or client-side id. A group of its own, not
	// the sdk group's flag delivery: its function only resolves a credential and hands the payload
	// on (locally to the in-process aggregator), scales with event volume, and needs no flag reads.
	{ID: "postServerEvents", Group: "events", Method: "POST", Path: "/bulk", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},
	{ID: "postDiagnosticEvent", Group: "events", Method: "POST", Path: "/diagnostic", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},
	{ID: "postMobileEvents", Group: "events", Method: "POST", Path: "/mobile/events/bulk", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},
	{ID: "postClientSideEvents", Group: "events", Method: "POST", Path: "/events/bulk/{clientSideId}", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},
	{ID: "postMobileDiagnosticEvent", Group: "events", Method: "POST", Path: "/mobile/events/diagnostic", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},
	{ID: "postClientSideDiagnosticEvent", Group: "events", Method: "POST", Path: "/events/diagnostic/{clientSideId}", Scope: Write, Public: true, Resource: "proj/*:env/*", Action: "postEvents"},

	// contexts: spec 4.5 and 4.23 "Search for contexts", "Evaluate flags for context instance".
	// Search and evaluate are POSTs that store nothing, so they need only read scope.
	{ID: "getContextKindsByProjectKey", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/context-kinds", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "putContextKind", Group: "contexts", Method: "PUT", Path: "/api/v2/projects/{projectKey}/context-kinds/{key}", Scope: Write, Resource: "proj/{projectKey}:context-kind/{key}", Action: "updateContextKind"},
	{ID: "getContextAttributeNames", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-attributes", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getContextAttributeValues", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-attributes/{attributeName}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getContextInstances", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/{id}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "deleteContextInstances", Group: "contexts", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/{id}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "deleteContextInstance"},
	{ID: "searchContextInstances", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/context-instances/search", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getContexts", Group: "contexts", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/contexts/{kind}/{key}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "searchContexts", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/contexts/search", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "evaluateContextInstance", Group: "contexts", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/flags/evaluate", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},

	// integrations: spec 4.8 (integration configurations); beta (spec 9.2 and reference).
	{ID: "getAllIntegrationConfigurations", Group: "integrations", Method: "GET", Path: "/api/v2/integration-configurations/keys/{integrationKey}", Beta: true, Scope: Read, Resource: "integration/{integrationKey}/*"},
	{ID: "createIntegrationConfiguration", Group: "integrations", Method: "POST", Path: "/api/v2/integration-configurations/keys/{integrationKey}", Beta: true, Scope: Write, Resource: "integration/{integrationKey}/*", Action: "createIntegration"},
	{ID: "getIntegrationConfiguration", Group: "integrations", Method: "GET", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Read, Resource: "integration/*/{integrationConfigurationId}"},
	{ID: "updateIntegrationConfiguration", Group: "integrations", Method: "PATCH", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Write, Resource: "integration/*/{integrationConfigurationId}", Action: "updateIntegration", BodyActions: true},
	{ID: "deleteIntegrationConfiguration", Group: "integrations", Method: "DELETE", Path: "/api/v2/integration-configurations/{integrationConfigurationId}", Beta: true, Scope: Write, Resource: "integration/*/{integrationConfigurationId}", Action: "deleteIntegration"},

	// delivery-configurations: spec 4.11 and 4.23 "Validate delivery configuration" (feature
	// store capability); beta (spec 9.2 and reference). Validate stores nothing but opens a
	// connection to the configured host: it needs the right to change the configuration
	// (write scope, updateConfiguration on it), so a reader cannot probe hosts with it.
	{ID: "getIntegrationDeliveryConfigurations", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore", Beta: true, Scope: Read, Resource: "proj/*:env/*:integration/*/*"},
	{ID: "getIntegrationDeliveryConfigurationByEnvironment", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}", Beta: true, Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "createIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "POST", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/*", Action: "createIntegration"},
	{ID: "getIntegrationDeliveryConfigurationById", Group: "delivery-configurations", Method: "GET", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{id}", Action: "viewProject"},
	{ID: "patchIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "PATCH", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{id}", Action: "updateIntegration", BodyActions: true},
	{ID: "deleteIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "DELETE", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{id}", Action: "deleteIntegration"},
	{ID: "validateIntegrationDeliveryConfiguration", Group: "delivery-configurations", Method: "POST", Path: "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}/validate", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{id}", Action: "updateConfiguration"},

	// big-segments: spec 4.20 and 4.23 "Create/Update big segment store integration"
	// (persistent store capability); beta per the reference.
	{ID: "getBigSegmentStoreIntegrations", Group: "big-segments", Method: "GET", Path: "/api/v2/integration-capabilities/big-segment-store", Beta: true, Scope: Read, Resource: "proj/*:env/*:integration/*/*"},
	{ID: "createBigSegmentStoreIntegration", Group: "big-segments", Method: "POST", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/*", Action: "createIntegration"},
	{ID: "getBigSegmentStoreIntegration", Group: "big-segments", Method: "GET", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{integrationId}", Action: "viewProject"},
	{ID: "patchBigSegmentStoreIntegration", Group: "big-segments", Method: "PATCH", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{integrationId}", Action: "updateIntegration", BodyActions: true},
	{ID: "deleteBigSegmentStoreIntegration", Group: "big-segments", Method: "DELETE", Path: "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{integrationId}", Action: "deleteIntegration"},

	// flag-imports: spec 4.18 and 4.23 "Create flag import configuration"; beta per the reference.
	{ID: "getFlagImportConfigurations", Group: "flag-imports", Method: "GET", Path: "/api/v2/integration-capabilities/flag-import", Beta: true, Scope: Read, Resource: "proj/*:integration/*/*"},
	{ID: "createFlagImportConfiguration", Group: "flag-imports", Method: "POST", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:integration/{integrationKey}/*", Action: "createIntegration"},
	{ID: "getFlagImportConfiguration", Group: "flag-imports", Method: "GET", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Read, Resource: "proj/{projectKey}:integration/{integrationKey}/{integrationId}", Action: "viewProject"},
	{ID: "patchFlagImportConfiguration", Group: "flag-imports", Method: "PATCH", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:integration/{integrationKey}/{integrationId}", Action: "updateIntegration", BodyActions: true},
	{ID: "deleteFlagImportConfiguration", Group: "flag-imports", Method: "DELETE", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:integration/{integrationKey}/{integrationId}", Action: "deleteIntegration"},
	{ID: "triggerFlagImportJob", Group: "flag-imports", Method: "POST", Path: "/api/v2/integration-capabilities/flag-import/{projectKey}/{integrationKey}/{integrationId}/trigger", Beta: true, Scope: Write, Resource: "proj/{projectKey}:integration/{integrationKey}/{integrationId}", Action: "triggerFlagImport"},

	// destinations: spec 4.16 and 4.23 "Generate warehouse destination key pair/setup script".
	// The reference names the path parameters projKey/envKey on the /projects/ routes and
	// projectKey/environmentKey elsewhere; both kept verbatim. The generate operations are
	// write scope: they create and keep key material or setup state (201 and 409 in the
	// reference; complete-setup reads the stored configuration).
	{ID: "getDestinations", Group: "destinations", Method: "GET", Path: "/api/v2/destinations", Scope: Read, Resource: "proj/*:env/*:destination/*"},
	{ID: "postDestination", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/{projectKey}/{environmentKey}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:destination/*", Action: "createDestination"},
	{ID: "getDestination", Group: "destinations", Method: "GET", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}:destination/{id}", Action: "viewProject"},
	{ID: "patchDestination", Group: "destinations", Method: "PATCH", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:destination/{id}", Action: "updateDestination", BodyActions: true},
	{ID: "deleteDestination", Group: "destinations", Method: "DELETE", Path: "/api/v2/destinations/{projectKey}/{environmentKey}/{id}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:destination/{id}", Action: "deleteDestination"},
	{ID: "postGenerateWarehouseDestinationKeyPair", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/generate-warehouse-destination-key-pair", Scope: Write, Resource: "proj/*:env/*:destination/*", Action: "createDestination"},
	{ID: "postGenerateProjectEnvWarehouseDestinationKeyPair", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/generate-warehouse-destination-key-pair", Scope: Write, Resource: "proj/{projKey}:env/{envKey}:destination/*", Action: "createDestination"},
	{ID: "postGenerateTrustPolicy", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/generate-trust-policy", Scope: Write, Resource: "proj/{projKey}:env/{envKey}:destination/*", Action: "createDestination"},
	{ID: "postGenerateWarehouseDestinationSetupScript", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/kinds/{kind}/setup", Scope: Write, Resource: "proj/{projKey}:env/{envKey}:destination/*", Action: "createDestination"},
	{ID: "postCompleteWarehouseDestinationSetup", Group: "destinations", Method: "POST", Path: "/api/v2/destinations/projects/{projKey}/environments/{envKey}/kinds/{kind}/complete-setup", Scope: Write, Resource: "proj/{projKey}:env/{envKey}:destination/*", Action: "createDestination"},

	// webhooks: spec 4.21.
	{ID: "getAllWebhooks", Group: "webhooks", Method: "GET", Path: "/api/v2/webhooks", Scope: Read, Resource: "webhook/*"},
	{ID: "postWebhook", Group: "webhooks", Method: "POST", Path: "/api/v2/webhooks", Scope: Write, Resource: "webhook/*", Action: "createWebhook"},
	{ID: "getWebhook", Group: "webhooks", Method: "GET", Path: "/api/v2/webhooks/{id}", Scope: Read, Resource: "webhook/{id}"},
	{ID: "patchWebhook", Group: "webhooks", Method: "PATCH", Path: "/api/v2/webhooks/{id}", Scope: Write, Resource: "webhook/{id}", Action: "updateWebhook", BodyActions: true},
	{ID: "deleteWebhook", Group: "webhooks", Method: "DELETE", Path: "/api/v2/webhooks/{id}", Scope: Write, Resource: "webhook/{id}", Action: "deleteWebhook"},

	// tokens: spec 4.9 (access tokens).
	{ID: "getTokens", Group: "tokens", Method: "GET", Path: "/api/v2/tokens", Scope: Read, Resource: "member/*:token/*"},
	{ID: "postToken", Group: "tokens", Method: "POST", Path: "/api/v2/tokens", Scope: Write, Resource: "member/*:token/*", Action: "createAccessToken"},
	{ID: "getToken", Group: "tokens", Method: "GET", Path: "/api/v2/tokens/{id}", Scope: Read, Resource: "member/*:token/{id}"},
	{ID: "patchToken", Group: "tokens", Method: "PATCH", Path: "/api/v2/tokens/{id}", Scope: Write, Resource: "member/*:token/{id}", Action: "updateAccessToken", BodyActions: true},
	{ID: "deleteToken", Group: "tokens", Method: "DELETE", Path: "/api/v2/tokens/{id}", Scope: Write, Resource: "member/*:token/{id}", Action: "deleteAccessToken"},
	{ID: "resetToken", Group: "tokens", Method: "POST", Path: "/api/v2/tokens/{id}/reset", Scope: Write, Resource: "member/*:token/{id}", Action: "resetAccessToken"},

	// oauth-clients: spec 4.2 (OAuth 2.0 clients).
	{ID: "getOAuthClients", Group: "oauth-clients", Method: "GET", Path: "/api/v2/oauth/clients", Scope: Read, Resource: "oauth-client/*"},
	{ID: "createOAuth2Client", Group: "oauth-clients", Method: "POST", Path: "/api/v2/oauth/clients", Scope: Write, Resource: "oauth-client/*", Action: "createOAuthClient"},
	{ID: "getOAuthClientById", Group: "oauth-clients", Method: "GET", Path: "/api/v2/oauth/clients/{clientId}", Scope: Read, Resource: "oauth-client/{clientId}"},
	{ID: "patchOAuthClient", Group: "oauth-clients", Method: "PATCH", Path: "/api/v2/oauth/clients/{clientId}", Scope: Write, Resource: "oauth-client/{clientId}", Action: "updateOAuthClient", BodyActions: true},
	{ID: "deleteOAuthClient", Group: "oauth-clients", Method: "DELETE", Path: "/api/v2/oauth/clients/{clientId}", Scope: Write, Resource: "oauth-client/{clientId}", Action: "deleteOAuthClient"},
	// The client_credentials grant (RFC 6749 §4.4): outside /api/v2, authenticated by the client's own credentials.
	{ID: "postOAuthToken", Group: "oauth-clients", Method: "POST", Path: "/trust/oauth/token", Scope: Write, Public: true, Resource: "oauth-client/*", Action: "createOAuthToken"},

	// sdk: what LaunchDarkly's SDKs read (issue 10), at the paths the SDKs use: flag data
	// for server-side SDKs (SDK key in Authorization), evaluations for client-side SDKs
	// (the environment's _id as client-side id in the path) and mobile SDKs (mobile key).
	// Public: each authenticates its SDK credential itself; no access token applies.
	// The stream and the REPORT forms are LocalOnly: in AWS SDKs poll and use GET.
	{ID: "getSDKLatestAll", Group: "sdk", Method: "GET", Path: "/sdk/latest-all", Scope: Read, Public: true},
	{ID: "getSDKLatestFlags", Group: "sdk", Method: "GET", Path: "/sdk/latest-flags", Scope: Read, Public: true},
	{ID: "getSDKLatestFlag", Group: "sdk", Method: "GET", Path: "/sdk/latest-flags/{flagKey}", Scope: Read, Public: true},
	{ID: "streamSDKAll", Group: "sdk", Method: "GET", Path: "/all", Scope: Read, Public: true, LocalOnly: true},
	{ID: "getSDKClientSideEvaluations", Group: "sdk", Method: "GET", Path: "/sdk/evalx/{clientSideId}/contexts/{contextBase64}", Scope: Read, Public: true},
	{ID: "reportSDKClientSideEvaluations", Group: "sdk", Method: "REPORT", Path: "/sdk/evalx/{clientSideId}/context", Scope: Read, Public: true, LocalOnly: true},
	{ID: "getSDKMobileEvaluations", Group: "sdk", Method: "GET", Path: "/msdk/evalx/contexts/{contextBase64}", Scope: Read, Public: true},
	{ID: "reportSDKMobileEvaluations", Group: "sdk", Method: "REPORT", Path: "/msdk/evalx/context", Scope: Read, Public: true, LocalOnly: true},
	// The client-side and mobile streams (LaunchDarkly's clientstream), and the ping streams of SDKs that cannot stream a REPORT.
	{ID: "streamSDKClientSideEvaluations", Group: "sdk", Method: "GET", Path: "/eval/{clientSideId}/{contextBase64}", Scope: Read, Public: true, LocalOnly: true},
	{ID: "streamSDKClientSideEvaluationsReport", Group: "sdk", Method: "REPORT", Path: "/eval/{clientSideId}", Scope: Read, Public: true, LocalOnly: true},
	{ID: "streamSDKClientSidePing", Group: "sdk", Method: "GET", Path: "/ping/{clientSideId}", Scope: Read, Public: true, LocalOnly: true},
	{ID: "streamSDKMobileEvaluations", Group: "sdk", Method: "GET", Path: "/meval/{contextBase64}", Scope: Read, Public: true, LocalOnly: true},
	{ID: "streamSDKMobileEvaluationsReport", Group: "sdk", Method: "REPORT", Path: "/meval", Scope: Read, Public: true, LocalOnly: true},
	{ID: "streamSDKMobilePing", Group: "sdk", Method: "GET", Path: "/mping", Scope: Read, Public: true, LocalOnly: true},
	// OpenFeature's Remote Evaluation Protocol (OFREP, github.com/open-feature/protocol): one flag
	// or every flag evaluated for an OpenFeature context, authenticated by an SDK key, mobile key or
	// client-side id in Authorization. Plain request and answer, so served in AWS too.
	{ID: "evaluateOFREPFlag", Group: "sdk", Method: "POST", Path: "/ofrep/v1/evaluate/flags/{key}", Scope: Read, Public: true},
	{ID: "evaluateOFREPFlags", Group: "sdk", Method: "POST", Path: "/ofrep/v1/evaluate/flags", Scope: Read, Public: true},

	// members: account members named by approval notify lists and token owners; reference CRUD.
	{ID: "getMembers", Group: "members", Method: "GET", Path: "/api/v2/members", Scope: Read, Resource: "member/*"},
	{ID: "postMembers", Group: "members", Method: "POST", Path: "/api/v2/members", Scope: Write, Resource: "member/*", Action: "createMember"},
	{ID: "getMember", Group: "members", Method: "GET", Path: "/api/v2/members/{id}", Scope: Read, Resource: "member/{id}"},
	{ID: "patchMember", Group: "members", Method: "PATCH", Path: "/api/v2/members/{id}", Scope: Write, Resource: "member/{id}", Action: "updateMember", BodyActions: true},
	{ID: "deleteMember", Group: "members", Method: "DELETE", Path: "/api/v2/members/{id}", Scope: Write, Resource: "member/{id}", Action: "deleteMember"},

	// teams: teams named by approval notify lists; reference CRUD, and the team's custom
	// roles and maintainers, which LaunchDarkly's Terraform provider reads.
	{ID: "getTeams", Group: "teams", Method: "GET", Path: "/api/v2/teams", Scope: Read, Resource: "team/*"},
	{ID: "postTeam", Group: "teams", Method: "POST", Path: "/api/v2/teams", Scope: Write, Resource: "team/*", Action: "createTeam"},
	{ID: "getTeam", Group: "teams", Method: "GET", Path: "/api/v2/teams/{teamKey}", Scope: Read, Resource: "team/{teamKey}"},
	{ID: "patchTeam", Group: "teams", Method: "PATCH", Path: "/api/v2/teams/{teamKey}", Scope: Write, Resource: "team/{teamKey}", Action: "updateTeam", BodyActions: true},
	{ID: "deleteTeam", Group: "teams", Method: "DELETE", Path: "/api/v2/teams/{teamKey}", Scope: Write, Resource: "team/{teamKey}", Action: "deleteTeam"},
	{ID: "getTeamRoles", Group: "teams", Method: "GET", Path: "/api/v2/teams/{teamKey}/roles", Scope: Read, Resource: "team/{teamKey}"},
	{ID: "getTeamMaintainers", Group: "teams", Method: "GET", Path: "/api/v2/teams/{teamKey}/maintainers", Scope: Read, Resource: "team/{teamKey}"},

	// roles: custom roles granted to tokens and members; reference CRUD.
	{ID: "getCustomRoles", Group: "roles", Method: "GET", Path: "/api/v2/roles", Scope: Read, Resource: "role/*"},
	{ID: "postCustomRole", Group: "roles", Method: "POST", Path: "/api/v2/roles", Scope: Write, Resource: "role/*", Action: "createRole"},
	{ID: "getCustomRole", Group: "roles", Method: "GET", Path: "/api/v2/roles/{customRoleKey}", Scope: Read, Resource: "role/{customRoleKey}"},
	{ID: "patchCustomRole", Group: "roles", Method: "PATCH", Path: "/api/v2/roles/{customRoleKey}", Scope: Write, Resource: "role/{customRoleKey}", Action: "updateRole", BodyActions: true},
	{ID: "deleteCustomRole", Group: "roles", Method: "DELETE", Path: "/api/v2/roles/{customRoleKey}", Scope: Write, Resource: "role/{customRoleKey}", Action: "deleteRole"},

	// applications: spec 4.10; beta (spec 9.2 and reference).
	{ID: "getApplications", Group: "applications", Method: "GET", Path: "/api/v2/applications", Beta: true, Scope: Read, Resource: "application/*"},
	{ID: "getApplication", Group: "applications", Method: "GET", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Read, Resource: "application/{applicationKey}"},
	{ID: "patchApplication", Group: "applications", Method: "PATCH", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Write, Resource: "application/{applicationKey}", Action: "updateApplication", BodyActions: true},
	{ID: "deleteApplication", Group: "applications", Method: "DELETE", Path: "/api/v2/applications/{applicationKey}", Beta: true, Scope: Write, Resource: "application/{applicationKey}", Action: "deleteApplication"},
	{ID: "getApplicationVersions", Group: "applications", Method: "GET", Path: "/api/v2/applications/{applicationKey}/versions", Beta: true, Scope: Read, Resource: "application/{applicationKey}"},
	{ID: "patchApplicationVersion", Group: "applications", Method: "PATCH", Path: "/api/v2/applications/{applicationKey}/versions/{versionKey}", Beta: true, Scope: Write, Resource: "application/{applicationKey}", Action: "updateApplicationVersion", BodyActions: true},
	{ID: "deleteApplicationVersion", Group: "applications", Method: "DELETE", Path: "/api/v2/applications/{applicationKey}/versions/{versionKey}", Beta: true, Scope: Write, Resource: "application/{applicationKey}", Action: "deleteApplicationVersion"},

	// ai-configs: spec 4.12 (AI Config variation); AI Configs, their variations and model
	// configs (4.12 checks modelConfigKey/modelConfigVersion). Not beta: the reference tags
	// them "AgentControl" without beta. The reference has no list-variations route. Left
	// out on purpose: the reference routes GET .../ai-configs/{configKey}/targeting|metrics
	// and .../ai-configs/prompt-snippets/{snippetKey} overlap GET
	// .../ai-configs/model-configs/{modelConfigKey} (or the variation routes) with neither
	// pattern more specific, which net/http.ServeMux rejects with a panic.
	{ID: "getAIConfigs", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "postAIConfig", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs", Scope: Write, Resource: "proj/{projectKey}:aiconfig/*", Action: "createAIConfig"},
	{ID: "getAIConfig", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "patchAIConfig", Group: "ai-configs", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Write, Resource: "proj/{projectKey}:aiconfig/{configKey}", Action: "updateAIConfig"},
	{ID: "deleteAIConfig", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}", Scope: Write, Resource: "proj/{projectKey}:aiconfig/{configKey}", Action: "deleteAIConfig"},
	{ID: "postAIConfigVariation", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations", Scope: Write, Resource: "proj/{projectKey}:aiconfig/{configKey}", Action: "createAIConfigVariation"},
	{ID: "getAIConfigVariation", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "patchAIConfigVariation", Group: "ai-configs", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Write, Resource: "proj/{projectKey}:aiconfig/{configKey}", Action: "updateAIConfigVariation"},
	{ID: "deleteAIConfigVariation", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}", Scope: Write, Resource: "proj/{projectKey}:aiconfig/{configKey}", Action: "deleteAIConfigVariation"},
	{ID: "listModelConfigs", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "postModelConfig", Group: "ai-configs", Method: "POST", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs", Scope: Write, Resource: "proj/{projectKey}:ai-model-config/*", Action: "createAIModelConfig"},
	{ID: "getModelConfig", Group: "ai-configs", Method: "GET", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs/{modelConfigKey}", Scope: Read, Resource: "proj/{projectKey}", Action: "viewProject"},
	{ID: "deleteModelConfig", Group: "ai-configs", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/ai-configs/model-configs/{modelConfigKey}", Scope: Write, Resource: "proj/{projectKey}:ai-model-config/{modelConfigKey}", Action: "deleteAIModelConfig"},

	// adaptive-triggers: spec 4.14. The reference has no adaptive-trigger routes at all, so the
	// path is the spec's and every id here is named by us in the reference style; the
	// collection routes (list, create) and patch/delete on the item are our additions. Not beta:
	// spec 9.2 does not label them.
	{ID: "getAdaptiveTriggers", Group: "adaptive-triggers", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "postAdaptiveTrigger", Group: "adaptive-triggers", Method: "POST", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:adaptive-trigger/*", Action: "createAdaptiveTrigger"},
	{ID: "getAdaptiveTrigger", Group: "adaptive-triggers", Method: "GET", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "patchAdaptiveTrigger", Group: "adaptive-triggers", Method: "PATCH", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:adaptive-trigger/{triggerID}", Action: "updateAdaptiveTrigger", BodyActions: true},
	{ID: "deleteAdaptiveTrigger", Group: "adaptive-triggers", Method: "DELETE", Path: "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}", Scope: Write, Resource: "proj/{projectKey}:env/{environmentKey}:adaptive-trigger/{triggerID}", Action: "deleteAdaptiveTrigger"},
	// The alert source fires a trigger with the token the create answer showed once
	// (Authorization header), not an access token: Public, like the SDK routes.
	{ID: "postAdaptiveTriggerFire", Group: "adaptive-triggers", Method: "POST", Path: "/api/v2/adaptive-triggers/{triggerID}/fire", Scope: Write, Public: true, Resource: "proj/*:env/*:adaptive-trigger/{triggerID}", Action: "fireAdaptiveTrigger"},

	// insights: spec 4.4 (insight groups), 4.15 (repositories), 4.22 (flag events) and 4.23
	// "Update deployment", plus scores and deployment events; beta (spec 9.2 and reference).
	{ID: "getInsightsScores", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/scores", Beta: true, Scope: Read, Resource: "insight/*"},
	{ID: "createInsightGroup", Group: "insights", Method: "POST", Path: "/api/v2/engineering-insights/insights/group", Beta: true, Scope: Write, Resource: "insight-group/*", Action: "createInsightGroup"},
	{ID: "getInsightGroups", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/groups", Beta: true, Scope: Read, Resource: "insight-group/*"},
	{ID: "getInsightGroup", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Read, Resource: "insight-group/{insightGroupKey}"},
	{ID: "patchInsightGroup", Group: "insights", Method: "PATCH", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Write, Resource: "insight-group/{insightGroupKey}", Action: "updateInsightGroup", BodyActions: true},
	{ID: "deleteInsightGroup", Group: "insights", Method: "DELETE", Path: "/api/v2/engineering-insights/insights/groups/{insightGroupKey}", Beta: true, Scope: Write, Resource: "insight-group/{insightGroupKey}", Action: "deleteInsightGroup"},
	{ID: "getInsightsRepositories", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/repositories", Beta: true, Scope: Read, Resource: "proj/*:insight-repository/*"},
	{ID: "associateRepositoriesAndProjects", Group: "insights", Method: "PUT", Path: "/api/v2/engineering-insights/repositories/projects", Beta: true, Scope: Write, Resource: "proj/*:insight-repository/*", Action: "createInsightRepositoryProject"},
	{ID: "deleteRepositoryProject", Group: "insights", Method: "DELETE", Path: "/api/v2/engineering-insights/repositories/{repositoryKey}/projects/{projectKey}", Beta: true, Scope: Write, Resource: "proj/{projectKey}:insight-repository/{repositoryKey}", Action: "deleteInsightRepositoryProject"},
	{ID: "getFlagEvents", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/flag-events", Beta: true, Scope: Read, Resource: "insight/*"},
	{ID: "getDeployments", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/deployments", Beta: true, Scope: Read, Resource: "deployment/*"},
	{ID: "getDeployment", Group: "insights", Method: "GET", Path: "/api/v2/engineering-insights/deployments/{deploymentID}", Beta: true, Scope: Read, Resource: "deployment/{deploymentID}"},
	{ID: "updateDeployment", Group: "insights", Method: "PATCH", Path: "/api/v2/engineering-insights/deployments/{deploymentID}", Beta: true, Scope: Write, Resource: "deployment/{deploymentID}", Action: "updateDeployment", BodyActions: true},
	{ID: "createDeploymentEvent", Group: "insights", Method: "POST", Path: "/api/v2/engineering-insights/deployment-events", Beta: true, Scope: Write, Resource: "deployment/*", Action: "createDeploymentEvent"},

	// code-refs: spec 4.23 "List extinctions" and part 6.2; extinctions are created from the
	// code reference repositories and branches, so that family comes along (statistics left out).
	{ID: "getExtinctions", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/extinctions", Scope: Read, Resource: "code-reference-repository/*"},
	{ID: "getRepositories", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories", Scope: Read, Resource: "code-reference-repository/*"},
	{ID: "postRepository", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories", Scope: Write, Resource: "code-reference-repository/*", Action: "createCodeRefsRepository"},
	{ID: "getRepository", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Read, Resource: "code-reference-repository/{repo}"},
	{ID: "patchRepository", Group: "code-refs", Method: "PATCH", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Write, Resource: "code-reference-repository/{repo}", Action: "updateCodeRefsRepository", BodyActions: true},
	{ID: "deleteRepository", Group: "code-refs", Method: "DELETE", Path: "/api/v2/code-refs/repositories/{repo}", Scope: Write, Resource: "code-reference-repository/{repo}", Action: "deleteCodeRefsRepository"},
	{ID: "getBranches", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}/branches", Scope: Read, Resource: "code-reference-repository/{repo}"},
	{ID: "getBranch", Group: "code-refs", Method: "GET", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}", Scope: Read, Resource: "code-reference-repository/{repo}"},
	{ID: "putBranch", Group: "code-refs", Method: "PUT", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}", Scope: Write, Resource: "code-reference-repository/{repo}", Action: "updateCodeRefsRepositoryBranches"},
	{ID: "deleteBranches", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories/{repo}/branch-delete-tasks", Scope: Write, Resource: "code-reference-repository/{repo}", Action: "updateCodeRefsRepositoryBranches"},
	{ID: "postExtinction", Group: "code-refs", Method: "POST", Path: "/api/v2/code-refs/repositories/{repo}/branches/{branch}/extinction-events", Scope: Write, Resource: "code-reference-repository/{repo}", Action: "updateCodeRefsRepositoryBranches"},

	// auditlog: spec 4.19 and 4.23 "Get audit log entry counts". Search and counts are POSTs
	// that store nothing: read scope.
	{ID: "getAuditLogEntries", Group: "auditlog", Method: "GET", Path: "/api/v2/auditlog", Scope: Read, Resource: "auditlog/*"},
	{ID: "postAuditLogEntries", Group: "auditlog", Method: "POST", Path: "/api/v2/auditlog", Scope: Read, Resource: "auditlog/*"},
	{ID: "getAuditLogEntry", Group: "auditlog", Method: "GET", Path: "/api/v2/auditlog/{id}", Scope: Read, Resource: "auditlog/{id}"},
	{ID: "postAuditLogEntryCounts", Group: "auditlog", Method: "POST", Path: "/api/v2/auditlog/counts", Scope: Read, Resource: "auditlog/*"},

	// usage: spec 4.17 and 4.23 (observability traces, SDK versions details, AI runs, MAU
	// clientside), plus every other read-only usage route of the reference. Beta because the
	// reference tags the family "Account usage (beta)". getMauUsage and getMauUsageByCategory
	// are deprecated in the reference; kept.
	{ID: "getAIRunsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/ai-runs", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getContextsClientsideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/clientside-contexts", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getMAUClientsideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/clientside-mau", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getDataExportEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/data-export-events", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getEvaluationsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/evaluations/{projectKey}/{environmentKey}/{featureFlagKey}", Beta: true, Scope: Read, Resource: "proj/{projectKey}:env/{environmentKey}", Action: "viewProject"},
	{ID: "getEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/events/{type}", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getExperimentationEventsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/experimentation-events", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getExperimentationKeysUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/experimentation-keys", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getMauUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getMauUsageByCategory", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau/bycategory", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getMauSdksByType", Group: "usage", Method: "GET", Path: "/api/v2/usage/mau/sdks", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getObservabilityErrorsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/errors", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getObservabilityLogsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/logs", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getObservabilityMetricsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/metrics", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getObservabilitySessionsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/sessions", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getObservabilityTracesUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/observability/traces", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getSdkAllVersions", Group: "usage", Method: "GET", Path: "/api/v2/usage/sdk-versions/all", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getSdkVersionsDetails", Group: "usage", Method: "GET", Path: "/api/v2/usage/sdk-versions/details", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getContextsServersideUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/serverside-contexts", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getServiceConnectionsUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/service-connections", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getStreamUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getStreamUsageBySdkVersion", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}/bysdkversion", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getStreamUsageSdkversion", Group: "usage", Method: "GET", Path: "/api/v2/usage/streams/{source}/sdkversions", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getContextsTotalUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/total-contexts", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getMAUTotalUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/total-mau", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getVegaAIUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/vega-ai", Beta: true, Scope: Read, Resource: "usage/*"},
	{ID: "getWarehouseExportUsage", Group: "usage", Method: "GET", Path: "/api/v2/usage/warehouse-export", Beta: true, Scope: Read, Resource: "usage/*"},
}
