package apptest

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

// Approval requests as the tests of approvals, AI Config approvals and the
// answer tables read them, and the calls they share.

// ApprovalsPath and ApprovalPath are the approval requests' paths.
const ApprovalsPath = example.ApprovalsPath

var ApprovalPath = example.ApprovalPath

// ApprovalReview is one review of an approval request answer.
type ApprovalReview struct {
	ID             string `json:"_id"`
	Kind           string `json:"kind"`
	CreationDate   string `json:"creationDate"`
	Comment        string `json:"comment"`
	MemberID       string `json:"memberId"`
	ServiceTokenID string `json:"serviceTokenId"`
}

// ApprovalDoc is an approval request answer.
type ApprovalDoc struct {
	ID              string           `json:"_id"`
	Version         int              `json:"_version"`
	CreationDate    string           `json:"creationDate"`
	ServiceKind     string           `json:"serviceKind"`
	RequestorID     string           `json:"requestorId"`
	Description     string           `json:"description"`
	ReviewStatus    string           `json:"reviewStatus"`
	AllReviews      []ApprovalReview `json:"allReviews"`
	NotifyMemberIDs []string         `json:"notifyMemberIds"`
	NotifyTeamKeys  []string         `json:"notifyTeamKeys"`
	Status          string           `json:"status"`
	FailureReason   string           `json:"failureReason"`
	Instructions    []map[string]any `json:"instructions"`
	Conflicts       []struct {
		Instruction map[string]any `json:"instruction"`
		Reason      string         `json:"reason"`
	} `json:"conflicts"`
	AppliedDate       string                           `json:"appliedDate"`
	AppliedByMemberID string                           `json:"appliedByMemberId"`
	ExecutionDate     string                           `json:"executionDate"`
	ResourceID        string                           `json:"resourceId"`
	OperatingOnID     string                           `json:"operatingOnId"`
	ApprovalSettings  map[string]any                   `json:"approvalSettings"`
	Links             map[string]struct{ Href string } `json:"_links"`
	Flag              *FlagDoc                         `json:"flag"`
	Project           map[string]any                   `json:"project"`
	Environments      []map[string]any                 `json:"environments"`
}

// DecodeApproval reads an approval request answer.
func DecodeApproval(t testing.TB, res *Response) ApprovalDoc {
	t.Helper()
	var d ApprovalDoc
	res.JSON(t, &d)
	return d
}

// ReviewApproval reviews request id (kind approve, decline or comment)
// with the token tok.
func ReviewApproval(t testing.TB, srv *Server, id, kind, tok string) *Response {
	t.Helper()
	return srv.Do(t, http.MethodPost, ApprovalPath(id)+"/reviews", map[string]any{"kind": kind, "comment": "c"}, "Authorization", tok)
}

// ApplyApproval applies request id with the admin token.
func ApplyApproval(t testing.TB, srv *Server, id string) *Response {
	t.Helper()
	return srv.Do(t, http.MethodPost, ApprovalPath(id)+"/apply", map[string]any{"comment": "ship"})
}

// Reviewer invites a member (a writer) and returns its id and an admin
// token of it, so it may review.
func Reviewer(t testing.TB, srv *Server, email string) (string, string) {
	t.Helper()
	m := InviteMembers(t, srv, map[string]any{"email": email, "role": "writer"})[0]
	_, tok := srv.MustIssueToken(t, token.Spec{Name: email, Role: identity.RoleAdmin, MemberID: m.ID})
	return m.ID, tok
}

// SetApprovals patches environment e of project p with ops (its approval
// settings), which must succeed.
func SetApprovals(t testing.TB, srv *Server, p, e string, ops ...PatchOp) {
	t.Helper()
	WantStatus(t, srv.Do(t, http.MethodPatch, EnvPath(p, e), ops), http.StatusOK)
}
