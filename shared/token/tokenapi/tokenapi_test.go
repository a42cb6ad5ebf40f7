package tokenapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/token"
)

var tokenValuePattern = regexp.MustCompile(`^api-` + apptest.UUIDv4 + `$`)

const tokensPath = apptest.API + "/tokens"

func tokenPath(id string) string { return tokensPath + "/" + id }

// tokenDoc is a token as the API shows it.
type tokenDoc struct {
	ID                string           `json:"_id"`
	OwnerID           string           `json:"ownerId"`
	MemberID          string           `json:"memberId"`
	Member            *json.RawMessage `json:"_member"`
	Name              string           `json:"name"`
	Description       string           `json:"description"`
	Role              string           `json:"role"`
	CustomRoleIDs     []string         `json:"customRoleIds"`
	InlineRole        []map[string]any `json:"inlineRole"`
	Token             string           `json:"token"`
	ServiceToken      bool             `json:"serviceToken"`
	DefaultAPIVersion int              `json:"defaultApiVersion"`
	CreationDate      msText           `json:"creationDate"`
	LastModified      msText           `json:"lastModified"`
	LastUsed          msText           `json:"lastUsed"`
	Expiry            msText           `json:"expiry"`
}

// msText is a timestamp the spec types as a JSON string of Unix
// milliseconds (spec 2.10); decoding a JSON number into it fails.
type msText int64

func (m *msText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a JSON string of Unix milliseconds, got %s", b)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a JSON string of Unix milliseconds, got %s", b)
	}
	*m = msText(n)
	return nil
}

// createTokenAs creates a token with the caller's value and returns the answer.
func createTokenAs(t testing.TB, srv *apptest.Server, caller string, body map[string]any) *apptest.Response {
	t.Helper()
	return srv.Do(t, http.MethodPost, tokensPath, body, "Authorization", caller)
}

// readToken reads a token with the admin token.
func readToken(t testing.TB, srv *apptest.Server, id string) tokenDoc {
	t.Helper()
	res := srv.Do(t, http.MethodGet, tokenPath(id), nil)
	apptest.WantStatus(t, res, http.StatusOK)
	var d tokenDoc
	res.JSON(t, &d)
	return d
}

// listTokens lists tokens with the admin token (query e.g. "?showAll=true").
func listTokens(t testing.TB, srv *apptest.Server, query string) []tokenDoc {
	t.Helper()
	res := srv.Do(t, http.MethodGet, tokensPath+query, nil)
	apptest.WantStatus(t, res, http.StatusOK)
	var out struct {
		Items []tokenDoc `json:"items"`
	}
	res.JSON(t, &out)
	return out.Items
}

// works reports whether value may read the project list.
func works(t testing.TB, srv *apptest.Server, value string) int {
	t.Helper()
	return srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", value).Status
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// lookupItem reads the item authentication finds a value by.
func lookupItem(t testing.TB, srv *apptest.Server, value string) (store.Item, bool) {
	t.Helper()
	it, err := srv.Table.Get(t.Context(), store.Key{PK: "TOKENHASH#" + sha256Hex(value), SK: "TOKENHASH"})
	if errors.Is(err, store.ErrNotFound) {
		return store.Item{}, false
	}
	if err != nil {
		t.Fatalf("read lookup item: %v", err)
	}
	return it, true
}

func TestTokens(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	ownerID := apptest.MemberIDByEmail(t, srv, "owner@flagplane.local")
	apptest.CreateRole(t, srv, "viewer", "", map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}})
	viewerID := apptest.RoleID(t, srv, "viewer")

	var created tokenDoc
	var value string
	t.Run("a create answers 201 with the whole api-<uuid v4> value, once", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "ci", "description": "for CI", "role": "writer"})
		apptest.WantStatus(t, res, http.StatusCreated)
		res.JSON(t, &created)
		value = created.Token
		if !tokenValuePattern.MatchString(value) {
			t.Fatalf("token %q is not api-<uuid v4>", value)
		}
		if created.ID == "" || created.Name != "ci" || created.Description != "for CI" || created.Role != "writer" || created.ServiceToken {
			t.Errorf("created token %+v", created)
		}
		if created.MemberID != ownerID || created.Member == nil || !strings.Contains(string(*created.Member), "owner@flagplane.local") {
			t.Errorf("a token made by the owner's admin token belongs to member %q (%v), want the owner %q", created.MemberID, created.Member, ownerID)
		}
		if created.DefaultAPIVersion != token.DefaultAPIVersion || created.CreationDate == 0 {
			t.Errorf("defaultApiVersion %d, creationDate %d", created.DefaultAPIVersion, created.CreationDate)
		}
		if created.LastUsed != 0 {
			t.Errorf("a new token has lastUsed %d", created.LastUsed)
		}
	})
	if value == "" {
		t.Fatal("no token was created")
	}
	last4 := value[len(value)-4:]

	t.Run("a later read shows only the last four characters", func(t *testing.T) {
		if got := readToken(t, srv, created.ID).Token; got != last4 {
			t.Errorf("token %q, want %q", got, last4)
		}
	})
	t.Run("the list shows every token by its last four characters only", func(t *testing.T) {
		found := false
		for _, d := range listTokens(t, srv, "?showAll=true") {
			if len(d.Token) != 4 {
				t.Errorf("token %s is listed as %q", d.ID, d.Token)
			}
			found = found || d.ID == created.ID && d.Token == last4
		}
		if !found {
			t.Errorf("token %s is not listed with %q", created.ID, last4)
		}
	})
	t.Run("the value authenticates requests, raw or after Bearer", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", value), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", "Bearer "+value), http.StatusOK)
	})
	t.Run("lastUsed appears after the token is used", func(t *testing.T) {
		id, fresh := srv.MustCreateToken(t, map[string]any{"name": "fresh", "role": "reader"})
		if got := readToken(t, srv, id).LastUsed; got != 0 {
			t.Fatalf("an unused token has lastUsed %d", got)
		}
		before := time.Now().UnixMilli()
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", fresh), http.StatusOK)
		after := time.Now().UnixMilli()
		got := int64(readToken(t, srv, id).LastUsed)
		if got < before || got > after {
			t.Errorf("lastUsed %d, want between %d and %d", got, before, after)
		}
		for _, d := range listTokens(t, srv, "") {
			if d.ID == id && int64(d.LastUsed) != got {
				t.Errorf("the list shows lastUsed %d, the token %d", d.LastUsed, got)
			}
		}
	})

	t.Run("every patchable path can be patched", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "patch me", "description": "old words", "role": "writer"})
		statement := map[string]any{"effect": "allow", "resources": []string{"proj/p"}, "actions": []string{"viewProject"}}
		for _, c := range []struct {
			path  string
			value any
			check func(tokenDoc) bool
		}{
			{"/name", "patched", func(d tokenDoc) bool { return d.Name == "patched" }},
			{"/description", "new words", func(d tokenDoc) bool { return d.Description == "new words" }},
			{"/role", "reader", func(d tokenDoc) bool { return d.Role == "reader" }},
			{"/customRoleIds", []string{"viewer"}, func(d tokenDoc) bool { return len(d.CustomRoleIDs) == 1 && d.CustomRoleIDs[0] == viewerID }},
			{"/inlineRole", []any{statement}, func(d tokenDoc) bool { return len(d.InlineRole) == 1 && d.InlineRole[0]["effect"] == "allow" }},
			{"/defaultApiVersion", 20220603, func(d tokenDoc) bool { return d.DefaultAPIVersion == 20220603 }},
		} {
			t.Run(c.path, func(t *testing.T) {
				res := srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace(c.path, c.value)})
				apptest.WantStatus(t, res, http.StatusOK)
				var d tokenDoc
				res.JSON(t, &d)
				if !c.check(d) || !c.check(readToken(t, srv, id)) {
					t.Errorf("patch of %s to %v is not shown: %s", c.path, c.value, res.Body)
				}
				if len(d.Token) != 4 {
					t.Errorf("a patch answer shows the token as %q", d.Token)
				}
			})
		}
	})
	// BUG: Token.Description is `omitempty`, and Service.Patch applies the
	// patch to the stored form, where an empty description is missing,
	// while the API shows "description": "". A replace of a field the
	// client can see then fails with 422.
	t.Run("the description a token shows as empty can be replaced", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "no description", "role": "reader"})
		res := srv.Do(t, http.MethodGet, tokenPath(id), nil)
		if d, ok := res.Map(t)["description"]; !ok || d != "" {
			t.Fatalf("description is shown as %v (present %v)", d, ok)
		}
		res = srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace("/description", "now described")})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := readToken(t, srv, id).Description; got != "now described" {
			t.Errorf("description %q", got)
		}
	})
	t.Run("any other path is refused with 400 naming it", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "read-only fields", "role": "reader"})
		for path, v := range map[string]any{
			"/serviceToken": true, "/memberId": "someone", "/token": "api-00000000-0000-4000-8000-000000000000", "/_id": "x",
			"/ownerId": "x", "/hash": "00", "/ending": "abcd", "/expiry": 1, "/lastUsed": 1, "/creationDate": 1,
		} {
			res := srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace(path, v)})
			apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", path)
		}
		if d := readToken(t, srv, id); d.ServiceToken || d.MemberID != ownerID {
			t.Errorf("a refused patch changed the token: %+v", d)
		}
	})
	t.Run("rights that do not parse or do not exist are refused with 400", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x", "role": "superuser"}), http.StatusBadRequest, "invalid_request", "role")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x", "customRoleIds": []string{"missing"}}), http.StatusBadRequest, "invalid_request", `"customRoleIds"[0]`, "missing")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x", "inlineRole": []map[string]any{{"effect": "maybe", "resources": []string{"proj/*"}, "actions": []string{"*"}}}}),
			http.StatusBadRequest, "invalid_request", "inlineRole", "statement 0", "effect")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x"}), http.StatusBadRequest, "invalid_request", "role")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": " ", "role": "reader"}), http.StatusBadRequest, "invalid_request", "name")
	})

	t.Run("a writer cannot manage tokens at all", func(t *testing.T) {
		_, writer := srv.MustCreateToken(t, map[string]any{"name": "writer", "role": "writer"})
		victim, _ := srv.MustCreateToken(t, map[string]any{"name": "victim", "role": "reader"})
		apptest.WantError(t, createTokenAs(t, srv, writer, map[string]any{"name": "mine", "role": "reader"}), http.StatusForbidden, "forbidden", "createAccessToken")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, tokenPath(victim), []apptest.PatchOp{apptest.Replace("/role", "admin")}, "Authorization", writer), http.StatusForbidden, "forbidden")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokenPath(victim)+"/reset", nil, "Authorization", writer), http.StatusForbidden, "forbidden", "resetAccessToken")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, tokenPath(victim), nil, "Authorization", writer), http.StatusForbidden, "forbidden", "deleteAccessToken")
	})
	t.Run("a reader cannot make even a reader token", func(t *testing.T) {
		_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
		apptest.WantError(t, createTokenAs(t, srv, reader, map[string]any{"name": "mine", "role": "reader"}), http.StatusForbidden, "forbidden")
	})

	// A token manager: may make and change tokens, and holds nothing else.
	clerkStatement := map[string]any{"effect": "allow", "resources": []string{"member/*:token/*"}, "actions": []string{"createAccessToken", "updateToken*", "resetAccessToken"}}
	apptest.CreateRole(t, srv, "token-clerk", "", clerkStatement)
	_, clerk := srv.MustCreateToken(t, map[string]any{"name": "clerk", "customRoleIds": []string{"token-clerk"}})

	t.Run("nobody makes a token with more rights than they hold: a token clerk cannot make an admin token", func(t *testing.T) {
		apptest.WantError(t, createTokenAs(t, srv, clerk, map[string]any{"name": "escalate", "role": "admin"}), http.StatusForbidden, "forbidden", "rights the caller does not")
		apptest.WantError(t, createTokenAs(t, srv, clerk, map[string]any{"name": "escalate", "role": "writer"}), http.StatusForbidden, "forbidden")
		apptest.WantError(t, createTokenAs(t, srv, clerk, map[string]any{"name": "escalate", "inlineRole": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}},
		}}), http.StatusForbidden, "forbidden")
	})
	var clerkMade string
	t.Run("a token clerk can make a token with its own custom role, or the same statements inline", func(t *testing.T) {
		res := createTokenAs(t, srv, clerk, map[string]any{"name": "clerk 2", "customRoleIds": []string{"token-clerk"}})
		apptest.WantStatus(t, res, http.StatusCreated)
		clerkMade, _ = res.Map(t)["_id"].(string)
		apptest.WantStatus(t, createTokenAs(t, srv, clerk, map[string]any{"name": "clerk 3", "inlineRole": []any{clerkStatement}}), http.StatusCreated)
	})
	t.Run("a token clerk can rename a token it made but not raise its role", func(t *testing.T) {
		if clerkMade == "" {
			t.Skip("no token was made by the clerk")
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, tokenPath(clerkMade), []apptest.PatchOp{apptest.Replace("/name", "renamed by clerk")}, "Authorization", clerk), http.StatusOK)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, tokenPath(clerkMade), []apptest.PatchOp{apptest.Replace("/role", "admin")}, "Authorization", clerk), http.StatusForbidden, "forbidden")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, tokenPath(clerkMade), []apptest.PatchOp{apptest.Replace("/inlineRole", []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}},
		})}, "Authorization", clerk), http.StatusForbidden, "forbidden")
		if d := readToken(t, srv, clerkMade); d.Role != "" || len(d.InlineRole) != 0 {
			t.Errorf("a refused patch changed the rights: %+v", d)
		}
	})
	// BUG: Service.Reset checks no rights beyond resetAccessToken: a caller
	// that may reset tokens gets the new value of a token holding more than
	// it does, which is making a token with more rights than one holds.
	t.Run("a token clerk cannot obtain an admin token's value by resetting it", func(t *testing.T) {
		adminID, adminValue := srv.MustCreateToken(t, map[string]any{"name": "another admin", "role": "admin"})
		res := srv.Do(t, http.MethodPost, tokenPath(adminID)+"/reset", nil, "Authorization", clerk)
		if res.Status == http.StatusOK {
			stolen, _ := res.Map(t)["token"].(string)
			t.Errorf("the clerk reset an admin token and received its new value; it now creates projects: %d",
				srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "stolen", "name": "Stolen"}, "Authorization", stolen).Status)
		}
		apptest.WantError(t, res, http.StatusForbidden, "forbidden")
		if res.Status == http.StatusForbidden && works(t, srv, adminValue) != http.StatusOK {
			t.Errorf("the refused reset still changed the admin token's value")
		}
	})
	// BUG: the Covers rule compares the new token with the caller token's
	// own grants only, not with its member's, so a member token escapes its
	// member's cap by making a service token, which has no member.
	t.Run("a member token cannot make a service token beyond its member's rights", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.API+"/members", []map[string]any{{"email": "demoted@example.com", "role": "reader", "customRoles": []string{"token-clerk"}}})
		apptest.WantStatus(t, res, http.StatusCreated)
		var ms struct {
			Items []struct {
				ID string `json:"_id"`
			} `json:"items"`
		}
		res.JSON(t, &ms)
		// An admin token kept by a member demoted to reader plus token-clerk.
		_, demoted := srv.MustIssueToken(t, token.Spec{Name: "kept", Role: identity.RoleAdmin, MemberID: ms.Items[0].ID})
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "capped", "name": "Capped"}, "Authorization", demoted), http.StatusForbidden, "forbidden")
		res = createTokenAs(t, srv, demoted, map[string]any{"name": "escape", "role": "admin", "serviceToken": true})
		if res.Status == http.StatusCreated {
			escaped, _ := res.Map(t)["token"].(string)
			t.Errorf("the capped member token made an uncapped admin service token; it creates projects: %d",
				srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "escaped", "name": "Escaped"}, "Authorization", escaped).Status)
		}
		apptest.WantError(t, res, http.StatusForbidden, "forbidden")
	})

	t.Run("a deleted token stops working at once in the process that deleted it", func(t *testing.T) {
		id, v := srv.MustCreateToken(t, map[string]any{"name": "doomed", "role": "reader"})
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", v), http.StatusOK) // now cached
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, tokenPath(id), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", v), http.StatusUnauthorized, "unauthorized")
		apptest.WantError(t, srv.Do(t, http.MethodGet, tokenPath(id), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, tokenPath(id), nil), http.StatusNotFound, "not_found")
		if _, ok := lookupItem(t, srv, v); ok {
			t.Errorf("the lookup item of a deleted token is still stored")
		}
		// Another process (another Lambda instance) trusts what it has
		// cached for up to token.CacheTTL; one that has not seen the token
		// reads the store and refuses it at once.
		apptest.WantError(t, srv.Reopen(t).Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", v), http.StatusUnauthorized, "unauthorized")
	})
	t.Run("a reset gives a new value that works and stops the old one at once", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "reset me", "role": "reader"})
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", old), http.StatusOK) // now cached
		res := srv.Do(t, http.MethodPost, tokenPath(id)+"/reset", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var d tokenDoc
		res.JSON(t, &d)
		if !tokenValuePattern.MatchString(d.Token) || d.Token == old || d.ID != id {
			t.Fatalf("reset answered %+v", d)
		}
		if got := works(t, srv, d.Token); got != http.StatusOK {
			t.Errorf("the new value answers %d", got)
		}
		if got := works(t, srv, old); got != http.StatusUnauthorized {
			t.Errorf("the old value answers %d, want 401", got)
		}
		if got := readToken(t, srv, id).Token; got != d.Token[len(d.Token)-4:] {
			t.Errorf("a read after the reset shows %q", got)
		}
		if _, ok := lookupItem(t, srv, old); ok {
			t.Errorf("the old value's lookup item is still stored")
		}
	})
	t.Run("a reset with a future expiry keeps the old value working until then", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "rotate me", "role": "reader"})
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", old), http.StatusOK)
		expiry := time.Now().Add(time.Hour).UnixMilli()
		res := srv.Do(t, http.MethodPost, fmt.Sprintf("%s/reset?expiry=%d", tokenPath(id), expiry), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		newValue, _ := res.Map(t)["token"].(string)
		if works(t, srv, newValue) != http.StatusOK || works(t, srv, old) != http.StatusOK {
			t.Errorf("during the grace period the new value answers %d and the old %d", works(t, srv, newValue), works(t, srv, old))
		}
		it, ok := lookupItem(t, srv, old)
		if !ok {
			t.Fatal("the old value's lookup item is gone")
		}
		var lk struct {
			ID     string `json:"id"`
			Expiry int64  `json:"expiry"`
		}
		if err := json.Unmarshal(it.Data, &lk); err != nil {
			t.Fatal(err)
		}
		if lk.ID != id || lk.Expiry != expiry || it.TTL < expiry/1000 {
			t.Errorf("old lookup item: token %q expiry %d ttl %d, want %q, %d and a TTL after it", lk.ID, lk.Expiry, it.TTL, id, expiry)
		}
		if it, ok := lookupItem(t, srv, newValue); !ok || strings.Contains(string(it.Data), `"expiry"`) || it.TTL != 0 {
			t.Errorf("new lookup item %v (found %v) should have no expiry", it, ok)
		}
		// The expired grace is honoured: an old value whose expiry has
		// passed is refused (seen from a process that has not cached it).
		stale := it
		stale.Data = []byte(strings.Replace(string(it.Data), fmt.Sprint(expiry), fmt.Sprint(time.Now().Add(-time.Second).UnixMilli()), 1))
		if err := srv.Table.Put(t.Context(), stale, store.Cond{}); err != nil {
			t.Fatal(err)
		}
		apptest.WantError(t, srv.Reopen(t).Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", old), http.StatusUnauthorized, "unauthorized", "expired")
	})
	// BUG: the old value's lookup item made by a reset with an expiry is
	// known to nothing afterwards: Service.Delete removes only the lookup of
	// the current hash and Service.Patch rewrites only that one, so during
	// the grace period the old value survives the token's deletion and keeps
	// the rights the token had before a patch, in every process.
	t.Run("during a reset's grace period, deleting the token stops the old value too", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "rotate then delete", "role": "reader"})
		res := srv.Do(t, http.MethodPost, fmt.Sprintf("%s/reset?expiry=%d", tokenPath(id), time.Now().Add(time.Hour).UnixMilli()), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, tokenPath(id), nil), http.StatusNoContent)
		if got := works(t, srv, old); got != http.StatusUnauthorized {
			t.Errorf("the old value of a deleted token answers %d, want 401", got)
		}
		if got := works(t, srv.Reopen(t), old); got != http.StatusUnauthorized {
			t.Errorf("in another process the old value of a deleted token answers %d, want 401", got)
		}
		if _, ok := lookupItem(t, srv, old); ok {
			t.Errorf("the old value's lookup item outlives the deleted token")
		}
	})
	t.Run("during a reset's grace period, lowering the token's role lowers the old value's too", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "rotate then demote", "role": "writer"})
		res := srv.Do(t, http.MethodPost, fmt.Sprintf("%s/reset?expiry=%d", tokenPath(id), time.Now().Add(time.Hour).UnixMilli()), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace("/role", "reader")}), http.StatusOK)
		for name, s := range map[string]*apptest.Server{"this process": srv, "another process": srv.Reopen(t)} {
			res := s.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/name", "by the old value")}, "Authorization", old)
			if res.Status != http.StatusForbidden {
				t.Errorf("in %s the old value of a token demoted to reader still writes: %d", name, res.Status)
			}
		}
	})
	t.Run("a reset with an expiry in the past or not a number is refused", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "bad reset", "role": "reader"})
		apptest.WantError(t, srv.Do(t, http.MethodPost, fmt.Sprintf("%s/reset?expiry=%d", tokenPath(id), time.Now().Add(-time.Hour).UnixMilli()), nil), http.StatusBadRequest, "invalid_request", "expiry")
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokenPath(id)+"/reset?expiry=soon", nil), http.StatusBadRequest, "invalid_request", "expiry")
	})

	var serviceID string
	t.Run("a service token belongs to no member", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "svc", "role": "reader", "serviceToken": true})
		apptest.WantStatus(t, res, http.StatusCreated)
		var d tokenDoc
		res.JSON(t, &d)
		serviceID = d.ID
		if !d.ServiceToken || d.MemberID != "" || d.Member != nil && string(*d.Member) != "null" {
			t.Errorf("service token %+v has a member", d)
		}
		if got := works(t, srv, d.Token); got != http.StatusOK {
			t.Errorf("the service token answers %d", got)
		}
		for _, own := range listTokens(t, srv, "") {
			if own.ID == serviceID {
				t.Errorf("the service token is listed among the caller's own tokens")
			}
		}
	})
	t.Run("showAll lists every member's and service token, and needs admin", func(t *testing.T) {
		otherMember := apptest.MemberIDByEmail(t, srv, "demoted@example.com")
		ids := map[string]bool{}
		for _, d := range listTokens(t, srv, "?showAll=true") {
			ids[d.ID] = true
			if d.MemberID == otherMember {
				ids["other member"] = true
			}
		}
		if !ids[serviceID] || !ids["other member"] {
			t.Errorf("showAll misses the service token (%v) or another member's token (%v)", ids[serviceID], ids["other member"])
		}
		for _, role := range []string{"reader", "writer"} {
			_, v := srv.MustCreateToken(t, map[string]any{"name": role, "role": role})
			apptest.WantError(t, srv.Do(t, http.MethodGet, tokensPath+"?showAll=true", nil, "Authorization", v), http.StatusForbidden, "forbidden", "showAll")
			apptest.WantStatus(t, srv.Do(t, http.MethodGet, tokensPath, nil, "Authorization", v), http.StatusOK)
		}
	})
	// BUG: the showAll check in the getTokens handler reads the token's own
	// built-in role only; a member token acts with at most its member's
	// rights, and this member is a reader.
	t.Run("showAll needs an admin member too: an admin token of a reader member is refused", func(t *testing.T) {
		m := apptest.MemberIDByEmail(t, srv, "demoted@example.com")
		_, v := srv.MustIssueToken(t, token.Spec{Name: "capped admin", Role: identity.RoleAdmin, MemberID: m})
		apptest.WantError(t, srv.Do(t, http.MethodGet, tokensPath+"?showAll=true", nil, "Authorization", v), http.StatusForbidden, "forbidden", "showAll")
	})
	t.Run("a token of a removed member stops working", func(t *testing.T) {
		id := apptest.MemberIDByEmail(t, srv, "demoted@example.com")
		_, v := srv.MustIssueToken(t, token.Spec{Name: "orphan", Role: identity.RoleReader, MemberID: id})
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.API+"/members/"+id, nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", v), http.StatusUnauthorized, "unauthorized")
	})
}

// TestTokenHashesAtRest reads every item of the store after tokens were
// made, used, patched, reset and deleted: no token value is stored in
// clear, and each value is found only by its SHA-256.
func TestTokenHashesAtRest(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	values := map[string]string{} // value -> token id
	live := map[string]bool{}
	mk := func(body map[string]any) (string, string) {
		id, v := srv.MustCreateToken(t, body)
		values[v], live[v] = id, true
		works(t, srv, v) // lastUsed in META
		return id, v
	}
	mk(map[string]any{"name": "plain", "role": "reader"})
	mk(map[string]any{"name": "service", "role": "writer", "serviceToken": true})
	patched, _ := mk(map[string]any{"name": "patched", "role": "reader"})
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, tokenPath(patched), []apptest.PatchOp{apptest.Replace("/name", "patched again"), apptest.Replace("/role", "writer")}), http.StatusOK)
	reset, oldValue := mk(map[string]any{"name": "reset", "role": "reader"})
	graced, gracedOld := mk(map[string]any{"name": "graced", "role": "reader"})
	deleted, deletedValue := mk(map[string]any{"name": "deleted", "role": "reader"})
	for id, query := range map[string]string{reset: "", graced: fmt.Sprintf("?expiry=%d", time.Now().Add(time.Hour).UnixMilli())} {
		res := srv.Do(t, http.MethodPost, tokenPath(id)+"/reset"+query, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		v, _ := res.Map(t)["token"].(string)
		values[v], live[v] = id, true
		works(t, srv, v)
	}
	live[oldValue] = false
	apptest.WantStatus(t, srv.Do(t, http.MethodDelete, tokenPath(deleted), nil), http.StatusNoContent)
	live[deletedValue] = false
	if len(values) != 8 {
		t.Fatalf("%d token values, want 8", len(values))
	}

	items := allItems(t, srv, []string{"p"}, values)
	t.Logf("%d items read from the store", len(items))

	t.Run("no item holds a token value in clear, in its keys or its data", func(t *testing.T) {
		for _, it := range items {
			text := strings.Join([]string{it.PK, it.SK, it.GSI1PK, it.GSI1SK, string(it.Data)}, "\n")
			for v := range values {
				if strings.Contains(text, v) || strings.Contains(text, strings.TrimPrefix(v, "api-")) {
					t.Errorf("item %s/%s holds the token value %s…", it.PK, it.SK, v[:8])
				}
			}
		}
	})
	t.Run("each live value is found by TOKENHASH#<sha256 hex of the value>", func(t *testing.T) {
		for v, id := range values {
			it, ok := lookupItem(t, srv, v)
			switch {
			case live[v] && !ok:
				t.Errorf("no lookup item at TOKENHASH#%s for token %s", sha256Hex(v), id)
			case !live[v] && ok:
				t.Errorf("a value that no longer works (token %s) still has its lookup item", id)
			case ok:
				if it.PK != "TOKENHASH#"+sha256Hex(v) || !strings.Contains(string(it.Data), id) {
					t.Errorf("lookup item %s does not name token %s: %s", it.PK, id, it.Data)
				}
			}
		}
		if _, ok := lookupItem(t, srv, gracedOld); !ok {
			t.Errorf("the old value of a reset with a grace period has no lookup item")
		}
	})
	t.Run("each stored token keeps the hash of its current value and no more", func(t *testing.T) {
		current := map[string]string{} // id -> hash of its current value
		for v, id := range values {
			if live[v] && v != gracedOld {
				current[id] = sha256Hex(v)
			}
		}
		n := 0
		for _, it := range items {
			if it.GSI1PK != store.TokensIndexPK {
				continue
			}
			n++
			var doc map[string]any
			if err := json.Unmarshal(it.Data, &doc); err != nil {
				t.Fatalf("token item %s: %v", it.PK, err)
			}
			id, _ := doc["_id"].(string)
			if want, ok := current[id]; ok && doc["hash"] != want {
				t.Errorf("token %s stores hash %v, want the hash of its current value %s", id, doc["hash"], want)
			}
			if _, ok := doc["token"]; ok {
				t.Errorf("token %s stores a token field: %v", id, doc["token"])
			}
		}
		if n != len(current)+1 { // and the bootstrap admin token
			t.Errorf("%d token items, want %d", n, len(current)+1)
		}
	})
}

// allItems reads every item of the partitions the tests know: the lists
// of the GSI1 index, the audit log, the outbox, META and the account, the
// projects' partitions and the items named by the token values.
func allItems(t testing.TB, srv *apptest.Server, projects []string, values map[string]string) []store.Item {
	t.Helper()
	var out []store.Item
	seen := map[store.Key]bool{}
	keep := func(it store.Item) {
		if !seen[it.Key()] {
			seen[it.Key()] = true
			out = append(out, it)
		}
	}
	query := func(q store.Query) {
		for {
			page, err := srv.Table.Query(t.Context(), q)
			if err != nil {
				t.Fatalf("query %+v: %v", q, err)
			}
			for _, it := range page.Items {
				keep(it)
			}
			if page.Cursor == "" {
				return
			}
			q.Cursor = page.Cursor
		}
	}
	for _, pk := range []string{store.TokensIndexPK, store.MembersIndexPK, store.RolesIndexPK, store.ProjectsIndexPK, store.TeamsIndexPK, store.OAuthClientsIndexPK} {
		query(store.Query{Index: store.IndexGSI1, PK: pk})
	}
	for _, pk := range []string{store.AuditPK, store.OutboxPK, store.MetaKey("").PK, store.AccountKey().PK} {
		query(store.Query{PK: pk})
	}
	for _, p := range projects {
		query(store.Query{PK: store.ProjectPartition(p)})
	}
	get := func(k store.Key) {
		it, err := srv.Table.Get(t.Context(), k)
		if err == nil {
			keep(it)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get %v: %v", k, err)
		}
	}
	for v, id := range values {
		get(store.TokenKey(id))
		get(store.TokenHashKey(sha256Hex(v)))
	}
	var members []store.Item
	for _, it := range out {
		if it.GSI1PK == store.MembersIndexPK {
			members = append(members, it)
		}
	}
	for _, it := range members {
		var m struct{ Email string }
		if json.Unmarshal(it.Data, &m) == nil && m.Email != "" {
			get(store.MemberEmailKey(m.Email))
		}
	}
	return out
}
