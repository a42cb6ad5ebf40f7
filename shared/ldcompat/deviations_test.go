package ldcompat_test

// A deviation is a field whose JSON type flagplane's spec sets apart from
// LaunchDarkly's on purpose, so LaunchDarkly's client cannot decode it.
// Each row names the operations whose answers carry the field (Field is
// its JSON path in that answer) and the reason. A decode error on a listed
// field is counted apart; on any other field it fails the tier; and a row
// whose deviation no longer happens fails too, so the table cannot rot.
type deviation struct {
	Ops    []string
	Field  string
	Reason string
}

// Reasons, by the spec's part 2.
const (
	tokenTimes    = "spec 2.10: access token timestamps are Unix ms as JSON strings; LaunchDarkly's Token has int64"
	approvalTimes = "spec 2.7: approval request timestamps are Unix ms as JSON strings; LaunchDarkly's model has int64"
	oauthTimes    = "spec 2.3: an OAuth client's _creationDate is Unix ms as a JSON string; LaunchDarkly's Client has int64"
	auditTimes    = "spec 2.19: an audit log entry's date is Unix ms as a JSON string; LaunchDarkly's model has int64"
	pipelineTimes = "spec 2.8: a release pipeline's createdAt is Unix ms as a JSON string; LaunchDarkly's client decodes a date-time"
	auditTarget   = "spec 2.19: an audit log entry's target is a Markdown sentence (string); LaunchDarkly's model has an object (TargetResourceRep)"
)

var (
	oneToken    = []string{"postToken", "getToken", "patchToken", "resetToken"}
	oneApproval = []string{"postApprovalRequest", "getApprovalRequest", "postApprovalRequestReview", "postApprovalRequestApply"}
	oneOAuth    = []string{"createOAuth2Client", "getOAuthClientById", "patchOAuthClient"}
)

var deviations = []deviation{
	{oneToken, "creationDate", tokenTimes},
	{oneToken, "lastModified", tokenTimes},
	{[]string{"getToken"}, "lastUsed", tokenTimes},
	{[]string{"getTokens"}, "items[].creationDate", tokenTimes},
	{[]string{"getTokens"}, "items[].lastModified", tokenTimes},
	{[]string{"getTokens"}, "items[].lastUsed", tokenTimes},

	{oneApproval, "creationDate", approvalTimes},
	{[]string{"getApprovalRequest", "postApprovalRequestReview", "postApprovalRequestApply"}, "allReviews[].creationDate", approvalTimes},
	{[]string{"getApprovalRequest", "postApprovalRequestApply"}, "appliedDate", approvalTimes},
	{[]string{"getApprovalRequests"}, "items[].creationDate", approvalTimes},

	{oneOAuth, "_creationDate", oauthTimes},
	{[]string{"getOAuthClients"}, "items[]._creationDate", oauthTimes},

	{[]string{"getAuditLogEntry"}, "date", auditTimes},
	{[]string{"getAuditLogEntries"}, "items[].date", auditTimes},
	{[]string{"getAuditLogEntry"}, "target", auditTarget},
	{[]string{"getAuditLogEntries"}, "items[].target", auditTarget},

	{[]string{"postReleasePipeline", "getReleasePipelineByKey", "putReleasePipeline"}, "createdAt", pipelineTimes},
	{[]string{"getAllReleasePipelines"}, "items[].createdAt", pipelineTimes},
}
