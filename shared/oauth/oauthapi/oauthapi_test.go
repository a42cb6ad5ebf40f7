package oauthapi_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
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

const (
	oauthClientsPath = apptest.API + "/oauth/clients"
	oauthTokenPath   = "/trust/oauth/token"
)

// oauthClient is an OAuth client answer as a test reads it.
type oauthClient struct {
	Links map[string]struct {
		Href string `json:"href"`
		Type string `json:"type"`
	} `json:"_links"`
	Name         string  `json:"name"`
	Description  string  `json:"description"`
	AccountID    string  `json:"_accountId"`
	ClientID     string  `json:"_clientId"`
	ClientSecret *string `json:"_clientSecret"`
	RedirectURI  string  `json:"redirectUri"`
	CreationDate string  `json:"_creationDate"`
	Access       struct {
		Allowed []struct{ Action string } `json:"allowed"`
		Denied  []struct{ Action string } `json:"denied"`
	} `json:"_access"`
}

// oauthCreate creates a client with the given token ("" for the admin's) and returns it with its secret.
func oauthCreate(t *testing.T, srv *apptest.Server, accessToken string, body map[string]any) (oauthClient, string) {
	t.Helper()
	var headers []string
	if accessToken != "" {
		headers = []string{"Authorization", accessToken}
	}
	res := srv.Do(t, http.MethodPost, oauthClientsPath, body, headers...)
	apptest.WantStatus(t, res, http.StatusCreated)
	var c oauthClient
	res.JSON(t, &c)
	if c.ClientSecret == nil || *c.ClientSecret == "" {
		t.Fatalf("the create response has no _clientSecret: %s", res.Body)
	}
	return c, *c.ClientSecret
}

func oauthBody(name, redirect string) map[string]any {
	return map[string]any{"name": name, "redirectUri": redirect}
}

// oauthExchange posts a form to the token endpoint; headers are extra name, value pairs.
func oauthExchange(t *testing.T, srv *apptest.Server, form url.Values, headers ...string) *apptest.Response {
	t.Helper()
	defaults := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""}
	for i := 0; i+1 < len(headers); i += 2 {
		delete(defaults, http.CanonicalHeaderKey(headers[i]))
	}
	h := append([]string(nil), headers...)
	for name, value := range defaults {
		h = append(h, name, value)
	}
	return srv.Do(t, http.MethodPost, oauthTokenPath, form.Encode(), h...)
}

func oauthBasic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// oauthAccessToken exchanges a client's credentials (Basic) for a token of scope.
func oauthAccessToken(t *testing.T, srv *apptest.Server, id, secret, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	res := oauthExchange(t, srv, form, "Authorization", oauthBasic(id, secret))
	apptest.WantStatus(t, res, http.StatusOK)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	res.JSON(t, &tok)
	return tok.AccessToken
}

// wantOAuthError checks an RFC 6749 §5.2 error answer.
func wantOAuthError(t *testing.T, res *apptest.Response, status int, code string) {
	t.Helper()
	apptest.WantStatus(t, res, status)
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		ID          string `json:"id"`
	}
	res.JSON(t, &e)
	if e.Error != code || e.Description == "" {
		t.Errorf("error %q (%q), want %q with a description: %s", e.Error, e.Description, code, res.Body)
	}
	if e.ID == "" || e.ID != res.Header.Get("X-Request-Id") {
		t.Errorf("error id %q, want the X-Request-Id %q", e.ID, res.Header.Get("X-Request-Id"))
	}
	if got := res.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	challenge := res.Header.Get("WWW-Authenticate")
	if code == "invalid_client" && !strings.HasPrefix(challenge, "Basic") {
		t.Errorf("invalid_client without a Basic challenge: WWW-Authenticate %q", challenge)
	}
}

// oauthMemberToken invites a member with role and stores a member token
// with the same role for them; it returns the member id and the token.
func oauthMemberToken(t *testing.T, srv *apptest.Server, email, role string) (string, string) {
	t.Helper()
	res := srv.Do(t, http.MethodPost, apptest.API+"/members", []map[string]any{{"email": email, "role": role}})
	apptest.WantStatus(t, res, http.StatusCreated)
	var out struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	res.JSON(t, &out)
	id := out.Items[0].ID
	_, value, writes, err := token.Issue(token.Spec{Name: email, Role: identity.Role(role), MemberID: id}, srv.AccountID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Table.Transact(context.Background(), writes); err != nil {
		t.Fatal(err)
	}
	return id, value
}

func TestOAuthClients(t *testing.T) {
	srv := apptest.New(t)
	created, secret := oauthCreate(t, srv, "", map[string]any{
		"name": "CI pipeline", "description": "deploys", "redirectUri": "https://ci.example.com/callback",
	})
	self := oauthClientsPath + "/" + created.ClientID

	t.Run("create answers every field of spec 2.3 and the secret", func(t *testing.T) {
		if created.Name != "CI pipeline" || created.Description != "deploys" || created.RedirectURI != "https://ci.example.com/callback" {
			t.Errorf("created %+v", created)
		}
		if created.AccountID != srv.AccountID || srv.AccountID == "" {
			t.Errorf("_accountId %q, want %q", created.AccountID, srv.AccountID)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(created.ClientID) {
			t.Errorf("_clientId %q is not a uuid", created.ClientID)
		}
		if len(secret) < 40 {
			t.Errorf("_clientSecret %q is short", secret)
		}
		ms, err := strconv.ParseInt(created.CreationDate, 10, 64)
		if err != nil || time.Since(time.UnixMilli(ms)).Abs() > time.Minute {
			t.Errorf("_creationDate %q is not a recent Unix ms string", created.CreationDate)
		}
		if created.Links["self"].Href != self || created.Links["parent"].Href != oauthClientsPath {
			t.Errorf("_links %+v", created.Links)
		}
	})

	t.Run("the admin's _access allows updating and deleting the client", func(t *testing.T) {
		var allowed []string
		for _, a := range created.Access.Allowed {
			allowed = append(allowed, a.Action)
		}
		if strings.Join(allowed, ",") != "updateName,updateDescription,updateRedirectUri,deleteOAuthClient" || len(created.Access.Denied) != 0 {
			t.Errorf("_access %+v", created.Access)
		}
	})

	t.Run("get answers the client without its secret", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, self, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got oauthClient
		res.JSON(t, &got)
		if got.ClientSecret != nil || strings.Contains(res.String(), secret) {
			t.Errorf("get shows the secret: %s", res.Body)
		}
		if got.ClientID != created.ClientID || got.Name != created.Name || got.CreationDate != created.CreationDate {
			t.Errorf("get %+v, created %+v", got, created)
		}
	})

	t.Run("list answers _links.self and the items without secrets", func(t *testing.T) {
		oauthCreate(t, srv, "", oauthBody("Second", "http://127.0.0.1:8080/cb"))
		res := srv.Do(t, http.MethodGet, oauthClientsPath, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var list struct {
			Links map[string]struct{ Href string } `json:"_links"`
			Items []oauthClient                    `json:"items"`
		}
		res.JSON(t, &list)
		if list.Links["self"].Href != oauthClientsPath || len(list.Items) != 2 {
			t.Fatalf("list %s", res.Body)
		}
		if strings.Contains(res.String(), "_clientSecret") || strings.Contains(res.String(), secret) {
			t.Errorf("list shows a secret: %s", res.Body)
		}
	})

	patches := []struct {
		name   string
		ops    []apptest.PatchOp
		status int
		field  string
	}{
		{"patching name, description and redirectUri succeeds", []apptest.PatchOp{apptest.Replace("/name", "CI"), apptest.Replace("/description", "builds"), apptest.Replace("/redirectUri", "http://localhost:9000/cb")}, http.StatusOK, ""},
		{"patching the client id is refused", []apptest.PatchOp{apptest.Replace("/_clientId", "x")}, http.StatusBadRequest, "_clientId"},
		{"patching the secret is refused", []apptest.PatchOp{apptest.Add("/_clientSecret", "x")}, http.StatusBadRequest, "_clientSecret"},
		{"patching the account is refused", []apptest.PatchOp{apptest.Replace("/_accountId", "x")}, http.StatusBadRequest, "_accountId"},
		{"patching the creation date is refused", []apptest.PatchOp{apptest.Replace("/_creationDate", 1)}, http.StatusBadRequest, "_creationDate"},
		{"patching an unknown field is refused", []apptest.PatchOp{apptest.Add("/owner", "x")}, http.StatusBadRequest, "owner"},
		{"patching a plain-http redirect is refused", []apptest.PatchOp{apptest.Replace("/redirectUri", "http://example.com/cb")}, http.StatusBadRequest, "redirectUri"},
		{"patching an empty name is refused", []apptest.PatchOp{apptest.Replace("/name", " ")}, http.StatusBadRequest, "name"},
	}
	for _, tt := range patches {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPatch, self, tt.ops)
			if tt.status != http.StatusOK {
				apptest.WantError(t, res, tt.status, "invalid_request", tt.field)
				return
			}
			apptest.WantStatus(t, res, http.StatusOK)
			var got oauthClient
			res.JSON(t, &got)
			if got.Name != "CI" || got.Description != "builds" || got.RedirectURI != "http://localhost:9000/cb" || got.ClientSecret != nil {
				t.Errorf("patched %s", res.Body)
			}
		})
	}

	t.Run("an id that cannot exist is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, oauthClientsPath+"/not-a-uuid", nil), http.StatusNotFound, "not_found")
	})

	t.Run("delete answers 204 and the client is gone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, self, nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, self, nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, self, nil), http.StatusNotFound, "not_found")
	})
}

func TestOAuthClientValidation(t *testing.T) {
	srv := apptest.New(t)
	tests := []struct {
		name  string
		body  map[string]any
		field string // "" when the client is created
	}{
		{"an https redirect is accepted", oauthBody("A", "https://app.example.com/cb"), ""},
		{"an http redirect to 127.0.0.1 is accepted", oauthBody("A", "http://127.0.0.1:8080/cb"), ""},
		{"an http redirect to ::1 is accepted", oauthBody("A", "http://[::1]/cb"), ""},
		{"an http redirect to localhost is accepted", oauthBody("A", "http://localhost/cb"), ""},
		{"an http redirect to another host is refused", oauthBody("A", "http://example.com/cb"), "redirectUri"},
		{"a relative redirect is refused", oauthBody("A", "/cb"), "redirectUri"},
		{"a redirect with a fragment is refused", oauthBody("A", "https://app.example.com/cb#x"), "redirectUri"},
		{"a redirect with userinfo is refused", oauthBody("A", "https://u:p@app.example.com/cb"), "redirectUri"},
		{"a redirect with another scheme is refused", oauthBody("A", "ftp://app.example.com/cb"), "redirectUri"},
		{"a missing redirect is refused", map[string]any{"name": "A"}, "redirectUri"},
		{"a missing name is refused", map[string]any{"redirectUri": "https://app.example.com/cb"}, "name"},
		{"a blank name is refused", oauthBody("  ", "https://app.example.com/cb"), "name"},
		{"a description over 1024 characters is refused", map[string]any{"name": "A", "redirectUri": "https://a.example.com", "description": strings.Repeat("d", 1025)}, "description"},
		{"a redirect of the wrong type is refused", map[string]any{"name": "A", "redirectUri": 7}, "redirectUri"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, oauthClientsPath, tt.body)
			if tt.field == "" {
				apptest.WantStatus(t, res, http.StatusCreated)
				return
			}
			apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", `"`+tt.field+`"`)
		})
	}

	t.Run("a service token, which belongs to no member, cannot create a client", func(t *testing.T) {
		_, value, writes, err := token.Issue(token.Spec{Name: "robot", Role: identity.RoleAdmin, ServiceToken: true}, srv.AccountID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Table.Transact(context.Background(), writes); err != nil {
			t.Fatal(err)
		}
		res := srv.Do(t, http.MethodPost, oauthClientsPath, oauthBody("A", "https://app.example.com/cb"), "Authorization", value)
		apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "member")
	})

	t.Run("a writer cannot create a client", func(t *testing.T) {
		_, writer := oauthMemberToken(t, srv, "writer@example.com", "writer")
		res := srv.Do(t, http.MethodPost, oauthClientsPath, oauthBody("A", "https://app.example.com/cb"), "Authorization", writer)
		apptest.WantError(t, res, http.StatusForbidden, "forbidden")
	})
}

func TestOAuthSecretsAtRest(t *testing.T) {
	srv := apptest.New(t)
	ctx := context.Background()
	c, secret := oauthCreate(t, srv, "", oauthBody("CI", "https://ci.example.com/cb"))
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, oauthClientsPath+"/"+c.ClientID, []apptest.PatchOp{apptest.Replace("/name", "CI 2")}), http.StatusOK)
	access := oauthAccessToken(t, srv, c.ClientID, secret, "writer")
	hash := token.Hash(secret)

	t.Run("the client item holds the secret's hash, never the secret", func(t *testing.T) {
		it, err := srv.Table.Get(ctx, store.OAuthClientKey(c.ClientID))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(it.Data), secret) || !strings.Contains(string(it.Data), hash) {
			t.Errorf("client item: %s", it.Data)
		}
	})

	t.Run("the access token is stored only as its hash lookup, which expires", func(t *testing.T) {
		it, err := srv.Table.Get(ctx, store.TokenHashKey(token.Hash(access)))
		if err != nil {
			t.Fatalf("no lookup item for the access token: %v", err)
		}
		if strings.Contains(string(it.Data), access) || strings.Contains(string(it.Data), secret) {
			t.Errorf("lookup item holds a credential: %s", it.Data)
		}
		if ttl := time.Unix(it.TTL, 0); ttl.Before(time.Now().Add(59*time.Minute)) || ttl.After(time.Now().Add(61*time.Minute)) {
			t.Errorf("lookup item TTL %v, want about an hour from now", ttl)
		}
	})

	t.Run("no audit entry holds the secret or its hash", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, oauthClientsPath+"/"+c.ClientID, nil), http.StatusNoContent)
		page, err := srv.Table.Query(ctx, store.Query{PK: store.AuditPK})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, it := range page.Items {
			data := string(it.Data)
			if strings.Contains(data, secret) || strings.Contains(data, hash) || strings.Contains(data, access) {
				t.Errorf("audit entry %s holds a credential: %s", it.SK, data)
			}
			if strings.Contains(data, `"kind":"oauth-client"`) {
				kinds = append(kinds, it.SK)
			}
		}
		if len(kinds) != 3 {
			t.Errorf("%d oauth-client audit entries, want 3 (create, update, delete)", len(kinds))
		}
	})
}

func TestOAuthClientCredentialsGrant(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	c, secret := oauthCreate(t, srv, "", oauthBody("CI", "https://ci.example.com/cb"))
	id := c.ClientID

	t.Run("Basic authentication gets a bearer token with no-store headers", func(t *testing.T) {
		res := oauthExchange(t, srv, url.Values{"grant_type": {"client_credentials"}}, "Authorization", oauthBasic(id, secret))
		apptest.WantStatus(t, res, http.StatusOK)
		var tok struct {
			AccessToken string `json:"access_token"`
			TokenType   string `json:"token_type"`
			ExpiresIn   int    `json:"expires_in"`
			Scope       string `json:"scope"`
		}
		res.JSON(t, &tok)
		if !strings.HasPrefix(tok.AccessToken, "api-") || tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "reader" {
			t.Errorf("token response %s", res.Body)
		}
		if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Pragma") != "no-cache" {
			t.Errorf("headers %v", res.Header)
		}
	})

	reader := oauthAccessToken(t, srv, id, secret, "reader")
	writer := oauthAccessToken(t, srv, id, secret, "writer")
	calls := []struct {
		name, method, path string
		body               any
		token              string
		status             int
	}{
		{"a reader token lists projects", http.MethodGet, apptest.API + "/projects", nil, "Bearer " + reader, http.StatusOK},
		{"a reader token cannot create a project", http.MethodPost, apptest.API + "/projects", map[string]any{"key": "r", "name": "R"}, "Bearer " + reader, http.StatusForbidden},
		{"a writer token creates a project", http.MethodPost, apptest.API + "/projects", map[string]any{"key": "w", "name": "W"}, "Bearer " + writer, http.StatusCreated},
		{"a writer token reads an environment", http.MethodGet, apptest.EnvPath("p", "production"), nil, "Bearer " + writer, http.StatusOK},
		{"a writer token cannot manage OAuth clients, though its member may", http.MethodPost, oauthClientsPath, oauthBody("X", "https://x.example.com"), "Bearer " + writer, http.StatusForbidden},
		{"a writer token cannot delete its own client", http.MethodDelete, oauthClientsPath + "/" + id, nil, "Bearer " + writer, http.StatusForbidden},
		{"the client secret is not an access token", http.MethodGet, apptest.API + "/projects", nil, "Bearer " + secret, http.StatusUnauthorized},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, tt.method, tt.path, tt.body, "Authorization", tt.token), tt.status)
		})
	}

	t.Run("form-parameter authentication works too", func(t *testing.T) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"writer"}}
		apptest.WantStatus(t, oauthExchange(t, srv, form), http.StatusOK)
	})

	t.Run("Basic with the same client_id in the form works", func(t *testing.T) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}}
		apptest.WantStatus(t, oauthExchange(t, srv, form, "Authorization", oauthBasic(id, secret)), http.StatusOK)
	})

	grant := url.Values{"grant_type": {"client_credentials"}}
	with := func(v url.Values, kv ...string) url.Values {
		out := url.Values{}
		for k, vs := range v {
			out[k] = append([]string(nil), vs...)
		}
		for i := 0; i < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	basic := oauthBasic(id, secret)
	refusals := []struct {
		name    string
		form    url.Values
		headers []string
		status  int
		code    string
	}{
		{"a wrong secret is invalid_client", grant, []string{"Authorization", oauthBasic(id, secret+"x")}, http.StatusUnauthorized, "invalid_client"},
		{"an unknown client is invalid_client", grant, []string{"Authorization", oauthBasic("00000000-0000-4000-8000-000000000000", secret)}, http.StatusUnauthorized, "invalid_client"},
		{"a wrong form secret is invalid_client", with(grant, "client_id", id, "client_secret", "nope"), nil, http.StatusUnauthorized, "invalid_client"},
		{"no client authentication is invalid_client", grant, nil, http.StatusUnauthorized, "invalid_client"},
		{"a Bearer Authorization header is invalid_client", grant, []string{"Authorization", "Bearer " + secret}, http.StatusUnauthorized, "invalid_client"},
		{"an unsupported grant type is refused", url.Values{"grant_type": {"password"}}, []string{"Authorization", basic}, http.StatusBadRequest, "unsupported_grant_type"},
		{"the authorization code grant is not supported", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, []string{"Authorization", basic}, http.StatusBadRequest, "unsupported_grant_type"},
		{"a missing grant type is invalid_request", url.Values{}, []string{"Authorization", basic}, http.StatusBadRequest, "invalid_request"},
		{"scope admin is invalid_scope", with(grant, "scope", "admin"), []string{"Authorization", basic}, http.StatusBadRequest, "invalid_scope"},
		{"scope owner is invalid_scope", with(grant, "scope", "owner"), []string{"Authorization", basic}, http.StatusBadRequest, "invalid_scope"},
		{"Basic and a form secret together are invalid_request", with(grant, "client_id", id, "client_secret", secret), []string{"Authorization", basic}, http.StatusBadRequest, "invalid_request"},
		{"a form client_id other than the Basic one is invalid_request", with(grant, "client_id", "someone-else"), []string{"Authorization", basic}, http.StatusBadRequest, "invalid_request"},
		{"a repeated parameter is invalid_request", with(grant, "scope", "reader", "scope", "writer"), []string{"Authorization", basic}, http.StatusBadRequest, "invalid_request"},
		{"a JSON body is invalid_request", grant, []string{"Authorization", basic, "Content-Type", "application/json"}, http.StatusBadRequest, "invalid_request"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			wantOAuthError(t, oauthExchange(t, srv, tt.form, tt.headers...), tt.status, tt.code)
		})
	}

	t.Run("credentials in the URL are invalid_request", func(t *testing.T) {
		q := url.Values{"client_id": {id}, "client_secret": {secret}}
		res := srv.Do(t, http.MethodPost, oauthTokenPath+"?"+q.Encode(), grant.Encode(),
			"Content-Type", "application/x-www-form-urlencoded", "Authorization", "")
		wantOAuthError(t, res, http.StatusBadRequest, "invalid_request")
	})

	t.Run("GET on the token endpoint is 405", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, oauthTokenPath, nil, "Authorization", ""), http.StatusMethodNotAllowed)
	})

	t.Run("an expired access token is 401", func(t *testing.T) {
		value, w, err := token.IssueBearer(token.Spec{Name: "oauth:" + id, Role: identity.RoleReader, MemberID: oauthOwnerID(t, srv)},
			srv.AccountID, time.Now().Add(-2*time.Hour), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Table.Put(context.Background(), w.Item, w.Cond); err != nil {
			t.Fatal(err)
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", "Bearer "+value), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("after the client is deleted its credentials fail and issued tokens live until they expire", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, oauthClientsPath+"/"+id, nil), http.StatusNoContent)
		wantOAuthError(t, oauthExchange(t, srv, grant, "Authorization", basic), http.StatusUnauthorized, "invalid_client")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", "Bearer "+reader), http.StatusOK)
	})
}

// oauthOwnerID is the member id of the admin token's member.
func oauthOwnerID(t *testing.T, srv *apptest.Server) string {
	t.Helper()
	c, _ := oauthCreate(t, srv, "", oauthBody("probe", "https://probe.example.com"))
	it, err := srv.Table.Get(context.Background(), store.OAuthClientKey(c.ClientID))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"_memberId":"([^"]+)"`).FindStringSubmatch(string(it.Data))
	if m == nil {
		t.Fatalf("client item has no member: %s", it.Data)
	}
	return m[1]
}

func TestOAuthTokensActForTheClientsMember(t *testing.T) {
	srv := apptest.New(t)
	memberID, admin := oauthMemberToken(t, srv, "admin@example.com", "admin")
	c, secret := oauthCreate(t, srv, admin, oauthBody("Bot", "https://bot.example.com/cb"))

	t.Run("while the member is an admin a writer token writes", func(t *testing.T) {
		w := oauthAccessToken(t, srv, c.ClientID, secret, "writer")
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "a", "name": "A"}, "Authorization", "Bearer "+w), http.StatusCreated)
	})

	t.Run("once the member is a reader a writer token can only read", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.API+"/members/"+memberID, []apptest.PatchOp{apptest.Replace("/role", "reader")}), http.StatusOK)
		w := oauthAccessToken(t, srv, c.ClientID, secret, "writer")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil, "Authorization", "Bearer "+w), http.StatusOK)
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "b", "name": "B"}, "Authorization", "Bearer "+w), http.StatusForbidden, "forbidden")
	})

	t.Run("once the member is removed the client is unauthorized", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.API+"/members/"+memberID, nil), http.StatusNoContent)
		res := oauthExchange(t, srv, url.Values{"grant_type": {"client_credentials"}}, "Authorization", oauthBasic(c.ClientID, secret))
		wantOAuthError(t, res, http.StatusBadRequest, "unauthorized_client")
	})
}
