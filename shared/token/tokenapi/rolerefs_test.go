package tokenapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/token"
)

// Custom roles are named by key or by _id wherever they are given, as
// LaunchDarkly's clients do: access tokens' customRoleIds (stored and shown
// as _ids, as the reference types them), members' customRoles and teams'
// customRoleKeys (stored and shown as keys, as the reference names them).

// tokenCount is how many tokens the admin sees.
func tokenCount(tb testing.TB, srv *apptest.Server) int {
	tb.Helper()
	return len(listTokens(tb, srv, "?showAll=true&limit=1000"))
}

func TestTokensNameCustomRolesByIDOrKey(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "a")
	apptest.EmptyProject(t, srv, "b")
	makerID := apptest.EnvMakerRole(t, srv, "env-maker")
	apptest.CreateRole(t, srv, "viewer", "", map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}})
	viewerID := apptest.RoleID(t, srv, "viewer")

	for _, c := range []struct {
		name  string
		refs  []string
		want  []string
		label string
	}{
		{"a token made with a role's _id holds that role and shows its _id", []string{makerID}, []string{makerID}, "by-id"},
		{"a token made with a role's key holds that role and shows its _id", []string{"env-maker"}, []string{makerID}, "by-key"},
		{"a role named by key and by _id is held once", []string{"env-maker", makerID}, []string{makerID}, "twice"},
		{"keys and _ids of different roles mix, in order", []string{viewerID, "env-maker"}, []string{viewerID, makerID}, "mixed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": c.label, "serviceToken": true, "customRoleIds": c.refs})
			apptest.WantStatus(t, res, http.StatusCreated)
			var created tokenDoc
			res.JSON(t, &created)
			if !slices.Equal(created.CustomRoleIDs, c.want) {
				t.Errorf("create answers customRoleIds %v, want %v", created.CustomRoleIDs, c.want)
			}
			if got := readToken(t, srv, created.ID).CustomRoleIDs; !slices.Equal(got, c.want) {
				t.Errorf("GET shows customRoleIds %v, want %v", got, c.want)
			}
			for _, d := range listTokens(t, srv, "?showAll=true&limit=1000") {
				if d.ID == created.ID && !slices.Equal(d.CustomRoleIDs, c.want) {
					t.Errorf("the list shows customRoleIds %v, want %v", d.CustomRoleIDs, c.want)
				}
			}
			if got := apptest.CreateEnvStatus(t, srv, created.Token, "a", "env-"+c.label); got != http.StatusCreated {
				t.Errorf("the token may not do what its role allows: status %d", got)
			}
			if got := apptest.CreateEnvStatus(t, srv, created.Token, "b", "env-"+c.label); got != http.StatusForbidden {
				t.Errorf("the token may do more than its role allows: status %d", got)
			}
		})
	}

	t.Run("a patch of customRoleIds takes keys and _ids and shows _ids", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "patched", "serviceToken": true, "role": "reader"})
		res := srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace("/customRoleIds", []string{"viewer", makerID})})
		apptest.WantStatus(t, res, http.StatusOK)
		var d tokenDoc
		res.JSON(t, &d)
		if want := []string{viewerID, makerID}; !slices.Equal(d.CustomRoleIDs, want) {
			t.Errorf("patch answers customRoleIds %v, want %v", d.CustomRoleIDs, want)
		}
		res = srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Add("/customRoleIds/-", "viewer")})
		apptest.WantStatus(t, res, http.StatusOK)
		res.JSON(t, &d)
		if want := []string{viewerID, makerID}; !slices.Equal(d.CustomRoleIDs, want) {
			t.Errorf("adding a role the token holds shows %v, want %v", d.CustomRoleIDs, want)
		}
	})

	t.Run("a role that does not exist, by key or by _id, is refused with 400 naming its index, and no token is made", func(t *testing.T) {
		before := tokenCount(t, srv)
		for _, refs := range [][]string{{"missing"}, {viewerID, "0123456789abcdef01234567"}} {
			apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x", "serviceToken": true, "customRoleIds": refs}),
				http.StatusBadRequest, "invalid_request", fmt.Sprintf(`"customRoleIds"[%d]`, len(refs)-1), refs[len(refs)-1])
		}
		if after := tokenCount(t, srv); after != before {
			t.Errorf("refused creates changed the token count from %d to %d", before, after)
		}
	})

	t.Run("more custom roles than a token may hold are refused with 400 before any is read", func(t *testing.T) {
		many := make([]string, token.MaxCustomRoles+1)
		for i := range many {
			many[i] = "viewer"
		}
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "x", "serviceToken": true, "customRoleIds": many}),
			http.StatusBadRequest, "invalid_request", `"customRoleIds"`, fmt.Sprint(token.MaxCustomRoles))
	})

	t.Run("a patch naming a role that does not exist is refused with 400 and changes nothing", func(t *testing.T) {
		id, _ := srv.MustCreateToken(t, map[string]any{"name": "kept", "serviceToken": true, "customRoleIds": []string{"viewer"}})
		apptest.WantError(t, srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace("/customRoleIds", []string{"viewer", "nope"})}),
			http.StatusBadRequest, "invalid_request", `"customRoleIds"[1]`, "nope")
		if got := readToken(t, srv, id).CustomRoleIDs; !slices.Equal(got, []string{viewerID}) {
			t.Errorf("a refused patch left customRoleIds %v", got)
		}
	})

	t.Run("a token stored with role keys, from before tokens stored _ids, shows _ids and keeps its rights", func(t *testing.T) {
		id, value := srv.MustIssueToken(t, token.Spec{Name: "old", CustomRoleIDs: []string{"env-maker"}})
		if got := readToken(t, srv, id).CustomRoleIDs; !slices.Equal(got, []string{makerID}) {
			t.Errorf("GET shows %v, want [%s]", got, makerID)
		}
		if got := apptest.CreateEnvStatus(t, srv, value, "a", "env-old"); got != http.StatusCreated {
			t.Errorf("the token lost its role's rights: status %d", got)
		}
		res := srv.Do(t, http.MethodPatch, tokenPath(id), []apptest.PatchOp{apptest.Replace("/name", "renamed")})
		apptest.WantStatus(t, res, http.StatusOK)
		if e := apptest.LatestAuditEntry(t, srv); !slices.Equal(e.Actions(), []string{"updateTokenName"}) {
			t.Errorf("renaming it recorded actions %v", e.Actions())
		}
	})

	t.Run("a role deleted and made again under its key does not pass its rights to tokens of the old one", func(t *testing.T) {
		apptest.CreateRole(t, srv, "short", "", map[string]any{"effect": "allow", "resources": []string{"proj/a:env/*"}, "actions": []string{"createEnvironment"}})
		_, value := srv.MustCreateToken(t, map[string]any{"name": "short", "serviceToken": true, "customRoleIds": []string{"short"}})
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.API+"/roles/short", nil), http.StatusNoContent)
		apptest.CreateRole(t, srv, "short", "", map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*"}, "actions": []string{"createEnvironment"}})
		fresh := srv.Reopen(t) // no cached rights
		if got := apptest.CreateEnvStatus(t, fresh, value, "a", "env-short"); got != http.StatusForbidden {
			t.Errorf("a token of the deleted role may still act: status %d", got)
		}
	})
}

func TestTokenExpiryInputs(t *testing.T) {
	srv := apptest.New(t)
	at := time.Now().Add(time.Hour).UnixMilli()
	for _, c := range []struct {
		name   string
		expiry any
		want   int64
	}{
		{"an expiry given as a number is kept and shown as a string", at, at},
		{"an expiry given as a numeric string is kept and shown as a string", strconv.FormatInt(at, 10), at},
		{"a null expiry never expires", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "exp", "role": "reader", "expiry": c.expiry})
			apptest.WantStatus(t, res, http.StatusCreated)
			var d tokenDoc
			res.JSON(t, &d)
			raw := res.Map(t)["expiry"]
			if c.want == 0 {
				if raw != nil {
					t.Errorf("expiry %v, want none", raw)
				}
				return
			}
			if raw != strconv.FormatInt(c.want, 10) || int64(readToken(t, srv, d.ID).Expiry) != c.want {
				t.Errorf("expiry %#v, want %q", raw, strconv.FormatInt(c.want, 10))
			}
		})
	}
	for _, c := range []struct {
		name   string
		expiry any
	}{
		{"an expiry that is not a number is refused with 400 naming it", "soon"},
		{"an expiry that is a fraction is refused with 400 naming it", 1.5},
		{"an expiry of the wrong JSON type is refused with 400 naming it", true},
		{"an expiry in the past is refused with 400 naming it", time.Now().Add(-time.Hour).UnixMilli()},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := tokenCount(t, srv)
			apptest.WantError(t, srv.Do(t, http.MethodPost, tokensPath, map[string]any{"name": "bad", "role": "reader", "expiry": c.expiry}),
				http.StatusBadRequest, "invalid_request", `"expiry"`)
			if after := tokenCount(t, srv); after != before {
				t.Errorf("a refused create changed the token count from %d to %d", before, after)
			}
		})
	}
	t.Run("a token past its expiry stops working", func(t *testing.T) {
		soon := time.Now().Add(300 * time.Millisecond).UnixMilli()
		_, value := srv.MustCreateToken(t, map[string]any{"name": "brief", "role": "reader", "expiry": strconv.FormatInt(soon, 10)})
		if got := works(t, srv, value); got != http.StatusOK {
			t.Fatalf("status %d before the expiry", got)
		}
		time.Sleep(time.Until(time.UnixMilli(soon)) + 50*time.Millisecond)
		if got := works(t, srv, value); got != http.StatusUnauthorized {
			t.Errorf("status %d after the expiry, want 401", got)
		}
	})

	for _, c := range []struct {
		name  string
		query string
		body  any
	}{
		{"a reset's expiry is taken from the query", "?expiry=%d", nil},
		{"a reset's expiry is taken from a body as a number", "", map[string]any{"expiry": "%d"}},
		{"a reset's expiry is taken from a body as a numeric string", "", map[string]any{"expiry": "\"%d\""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, old := srv.MustCreateToken(t, map[string]any{"name": "reset", "role": "reader"})
			grace := time.Now().Add(time.Hour).UnixMilli()
			path := tokenPath(id) + "/reset"
			var body any
			if c.query != "" {
				path += fmt.Sprintf(c.query, grace)
			} else {
				body = fmt.Sprintf(`{"expiry": %s}`, fmt.Sprintf(c.body.(map[string]any)["expiry"].(string), grace))
			}
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, path, body), http.StatusOK)
			if got := works(t, srv, old); got != http.StatusOK {
				t.Errorf("the old value stopped at once (status %d); it should work until its expiry", got)
			}
		})
	}
	t.Run("a reset with expiry both in the query and the body is refused with 400 and resets nothing", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "twice", "role": "reader"})
		grace := time.Now().Add(time.Hour).UnixMilli()
		apptest.WantError(t, srv.Do(t, http.MethodPost, fmt.Sprintf("%s/reset?expiry=%d", tokenPath(id), grace), map[string]any{"expiry": grace}),
			http.StatusBadRequest, "invalid_request", "expiry")
		if got := works(t, srv, old); got != http.StatusOK {
			t.Errorf("a refused reset changed the value: status %d", got)
		}
	})
	t.Run("a reset with a body expiry that is not a number is refused with 400 naming it", func(t *testing.T) {
		id, old := srv.MustCreateToken(t, map[string]any{"name": "word", "role": "reader"})
		apptest.WantError(t, srv.Do(t, http.MethodPost, tokenPath(id)+"/reset", map[string]any{"expiry": "tomorrow"}), http.StatusBadRequest, "invalid_request", `"expiry"`)
		if got := works(t, srv, old); got != http.StatusOK {
			t.Errorf("a refused reset changed the value: status %d", got)
		}
	})
}
