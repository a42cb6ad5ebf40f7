package apptest

import (
	"net/http"
	"testing"
)

// Arrangements of roles and members that the groups' tests share: custom
// roles grant rights in many groups' tests, members are reviewers,
// maintainers and token owners.

// UUIDv4 matches a version 4 UUID, the random part of keys and token values.
const UUIDv4 = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// Statement is one policy statement of a custom role.
func Statement(effect string, resources, actions []string) map[string]any {
	return map[string]any{"effect": effect, "resources": resources, "actions": actions}
}

// CreateRole creates a custom role with the admin token (basePermissions
// "" leaves the default).
func CreateRole(tb testing.TB, srv *Server, key, basePermissions string, statements ...map[string]any) {
	tb.Helper()
	body := map[string]any{"key": key, "name": "Role " + key, "policy": statements}
	if basePermissions != "" {
		body["basePermissions"] = basePermissions
	}
	WantStatus(tb, srv.Do(tb, http.MethodPost, "/api/v2/roles", body), http.StatusCreated)
}

// RoleID reads the _id of the custom role with key.
func RoleID(tb testing.TB, srv *Server, key string) string {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/roles/"+key, nil)
	WantStatus(tb, res, http.StatusOK)
	id, _ := res.Map(tb)["_id"].(string)
	if id == "" {
		tb.Fatalf("role %q has no _id: %s", key, res.Body)
	}
	return id
}

// Member is a member as the API shows it.
type Member struct {
	ID            string   `json:"_id"`
	Email         string   `json:"email"`
	FirstName     string   `json:"firstName"`
	LastName      string   `json:"lastName"`
	Role          string   `json:"role"`
	CustomRoles   []string `json:"customRoles"`
	PendingInvite bool     `json:"_pendingInvite"`
	Verified      bool     `json:"_verified"`
	CreationDate  int64    `json:"creationDate"`
	LastSeen      int64    `json:"_lastSeen"`
	LastSeenMeta  *struct {
		TokenID string `json:"tokenId"`
	} `json:"_lastSeenMetadata"`
	MFA string `json:"mfa"`
}

// MemberPath is the path of the member id.
func MemberPath(id string) string { return API + "/members/" + id }

// InviteMembers invites with the admin token and returns the answer's members.
func InviteMembers(tb testing.TB, srv *Server, invites ...map[string]any) []Member {
	tb.Helper()
	res := srv.Do(tb, http.MethodPost, "/api/v2/members", invites)
	WantStatus(tb, res, http.StatusCreated)
	var out struct {
		TotalCount int      `json:"totalCount"`
		Items      []Member `json:"items"`
	}
	res.JSON(tb, &out)
	if len(out.Items) != len(invites) || out.TotalCount != len(invites) {
		tb.Fatalf("%d invites answered with %d members (totalCount %d): %s", len(invites), len(out.Items), out.TotalCount, res.Body)
	}
	return out.Items
}

// MemberIDByEmail finds a member in the list.
func MemberIDByEmail(tb testing.TB, srv *Server, email string) string {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/members?limit=50", nil)
	WantStatus(tb, res, http.StatusOK)
	var out struct {
		Items []struct {
			ID    string `json:"_id"`
			Email string `json:"email"`
		} `json:"items"`
	}
	res.JSON(tb, &out)
	for _, m := range out.Items {
		if m.Email == email {
			return m.ID
		}
	}
	tb.Fatalf("no member %s in %s", email, res.Body)
	return ""
}

// EnvMakerRole creates a custom role that may create environments in
// project a only, and returns its _id.
func EnvMakerRole(tb testing.TB, srv *Server, key string) string {
	tb.Helper()
	CreateRole(tb, srv, key, "", Statement("allow", []string{"proj/a:env/*"}, []string{"createEnvironment"}))
	return RoleID(tb, srv, key)
}

// CreateEnvStatus is the status of creating environment key in project
// with the token value: what a token's rights allow there.
func CreateEnvStatus(tb testing.TB, srv *Server, value, project, key string) int {
	tb.Helper()
	return srv.Do(tb, http.MethodPost, EnvsPath(project), map[string]any{"key": key, "name": key, "color": "00AA00"}, "Authorization", value).Status
}
