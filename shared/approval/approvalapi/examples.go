package approvalapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteApprovalRequest": func(w *example.World) example.Call {
				return example.Call{Path: example.ApprovalPath(pendingApproval(w))}
			},
			"getApprovalRequest": func(w *example.World) example.Call {
				return example.Call{Path: example.ApprovalPath(w.AppliedID)}
			},
			"getApprovalRequests": func(*example.World) example.Call { return example.Call{Path: example.ApprovalsPath} },
			"patchApprovalRequest": func(w *example.World) example.Call {
				return example.Call{Path: example.ApprovalPath(pendingApproval(w)), Headers: []string{"SVC-API-Version", "beta"},
					Body: map[string]any{"instructions": []any{example.Instr("updateDescription", "value", "New description")}}}
			},
			"postApprovalRequest": func(w *example.World) example.Call {
				return example.Post(example.ApprovalsPath, map[string]any{"resourceId": "proj/" + w.Project + ":env/test:flag/" + w.Flag,
					"description": "turn on", "instructions": []any{example.Instr("turnFlagOn")}})
			},
			"postApprovalRequestApply": func(w *example.World) example.Call {
				id := pendingApproval(w)
				w.Must(http.StatusOK, http.MethodPost, example.ApprovalPath(id)+"/reviews", map[string]any{"kind": "approve"}, "Authorization", w.ReviewerToken)
				return example.Post(example.ApprovalPath(id)+"/apply", map[string]any{"comment": "go"})
			},
			"postApprovalRequestReview": func(w *example.World) example.Call {
				r := example.Post(example.ApprovalPath(pendingApproval(w))+"/reviews", map[string]any{"kind": "approve", "comment": "ok"})
				r.Headers = []string{"Authorization", w.ReviewerToken}
				return r
			},
		},
		// The spec's part 2 types these as strings of Unix ms; a dated LD-API-Version answers integers.
		SpecTypes: map[string]map[string]string{
			"ApprovalRequestResponse":           {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
			"ExpandableApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
			"FlagConfigApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
			"ReviewResponse":                    {"creationDate": "string"},
		},
		Dated: map[string][]string{
			"ApprovalRequestResponse":           {"creationDate", "appliedDate", "executionDate"},
			"ExpandableApprovalRequestResponse": {"creationDate", "appliedDate", "executionDate"},
			"FlagConfigApprovalRequestResponse": {"creationDate", "appliedDate", "executionDate"},
			"ReviewResponse":                    {"creationDate"},
		},
		Queries: map[string][]string{
			"getApprovalRequest":  {"?expand=environments,flag,project,resource"},
			"getApprovalRequests": {"?expand=environments,flag,project"},
		},
	}
}

// pendingApproval is a new pending approval request on the flag in test.
func pendingApproval(w *example.World) string {
	return example.Str(w.Must(http.StatusCreated, http.MethodPost, example.ApprovalsPath, map[string]any{
		"resourceId": "proj/" + w.Project + ":env/test:flag/" + w.Flag, "description": "pending",
		"instructions": []any{example.Instr("addUserTargets", "values", []string{w.Unique("user")}, "variationId", w.Variations[0])}}), "_id")
}
