// Package oauthapi serves the oauth-clients group over HTTP: OAuth 2.0
// clients, and the token endpoint that grants them access tokens
// (RFC 6749's client credentials grant).
package oauthapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the oauth-clients group over a.
func New(a *app.App) app.Group {
	h := handlers{clients: a.Services.OAuth}
	return app.Group{
		Name:     "oauth-clients",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getOAuthClients":    h.getOAuthClients,
			"createOAuth2Client": h.createOAuth2Client,
			"getOAuthClientById": h.getOAuthClientByID,
			"patchOAuthClient":   h.patchOAuthClient,
			"deleteOAuthClient":  h.deleteOAuthClient,
			"postOAuthToken":     h.postOAuthToken,
		},
		Needs: map[string]api.Needs{
			"patchOAuthClient": api.PatchNeeds("an OAuth client", oauth.PatchActions),
		},
		Answers: map[string]api.Answer{
			"getOAuthClients":    {Status: http.StatusOK, Rep: oauthClientsRep{}},
			"createOAuth2Client": {Status: http.StatusCreated, Rep: oauthClientRep{}},
			"getOAuthClientById": {Status: http.StatusOK, Rep: oauthClientRep{}},
			"patchOAuthClient":   {Status: http.StatusOK, Rep: oauthClientRep{}},
			"deleteOAuthClient":  {Status: http.StatusNoContent},
			// The token endpoint refuses with RFC 6749's error body.
			"postOAuthToken": {Status: http.StatusOK, Rep: oauthTokenRep{}, Error: oauthErrorRep{}},
		},
	}
}

// oauthClientRep is an OAuth 2.0 client as the API shows it (spec 2.3).
// ClientSecret is set only in the create response.
type oauthClientRep struct {
	Links        api.Links            `json:"_links"`
	Name         string               `json:"name"`
	Description  string               `json:"description"`
	AccountID    string               `json:"_accountId"`
	ClientID     string               `json:"_clientId"`
	ClientSecret string               `json:"_clientSecret,omitempty"`
	RedirectURI  string               `json:"redirectUri"`
	CreationDate jsondoc.MillisString `json:"_creationDate"`
	Access       policy.Access        `json:"_access"`
}

func newOAuthClientRep(r *http.Request, c *oauth.Client) oauthClientRep {
	return oauthClientRep{
		Links: api.Links{"self": api.JSONLink(oauth.Href(c.ID)), "parent": api.JSONLink(oauth.CollectionHref)},
		Name:  c.Name, Description: c.Description, AccountID: c.AccountID, ClientID: c.ID, RedirectURI: c.RedirectURI,
		CreationDate: jsondoc.MillisString(c.CreationDate),
		Access:       reps.Access(r, policy.NewResource("oauth-client", c.ID), oauth.Actions),
	}
}

type oauthClientsRep struct {
	Links api.Links        `json:"_links"`
	Items []oauthClientRep `json:"items"`
}

// handlers serve the group's operations.
type handlers struct {
	clients *oauth.Service
}

func (h handlers) getOAuthClients(w http.ResponseWriter, r *http.Request) error {
	all, err := h.clients.List(r.Context())
	if err != nil {
		return err
	}
	out := oauthClientsRep{Links: api.Self(oauth.CollectionHref), Items: make([]oauthClientRep, 0, len(all))}
	for _, c := range all {
		out.Items = append(out.Items, newOAuthClientRep(r, c))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) createOAuth2Client(w http.ResponseWriter, r *http.Request) error {
	var in oauth.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, _ := identity.From(r.Context())
	c, secret, err := h.clients.Create(r.Context(), oauth.Creator{MemberID: p.MemberID, AccountID: p.AccountID}, in)
	if err != nil {
		return err
	}
	rep := newOAuthClientRep(r, c)
	rep.ClientSecret = secret
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusCreated, rep)
	return nil
}

func (h handlers) getOAuthClientByID(w http.ResponseWriter, r *http.Request) error {
	c, err := h.clients.Get(r.Context(), r.PathValue("clientId"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newOAuthClientRep(r, c))
	return nil
}

func (h handlers) patchOAuthClient(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an OAuth client")
	if err != nil {
		return err
	}
	c, err := h.clients.Patch(r.Context(), r.PathValue("clientId"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newOAuthClientRep(r, c))
	return nil
}

func (h handlers) deleteOAuthClient(w http.ResponseWriter, r *http.Request) error {
	if err := h.clients.Delete(r.Context(), r.PathValue("clientId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) postOAuthToken(w http.ResponseWriter, r *http.Request) error {
	req, err := readTokenRequest(w, r)
	if err == nil {
		var issued oauth.Issued
		if issued, err = h.clients.Token(r.Context(), req); err == nil {
			noStore(w)
			api.WriteJSON(w, http.StatusOK, oauthTokenRep{
				AccessToken: issued.AccessToken, TokenType: issued.TokenType, ExpiresIn: issued.ExpiresIn, Scope: issued.Scope,
			})
			return nil
		}
	}
	var refused *oauth.Error
	if !errors.As(err, &refused) {
		return err
	}
	writeOAuthError(w, r, refused)
	return nil
}

// oauthTokenRep is the successful token response of RFC 6749 §5.1.
type oauthTokenRep struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// oauthErrorRep is the error response of RFC 6749 §5.2, with the request
// id every error body of this API carries.
type oauthErrorRep struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	ID          string `json:"id"`
}

// maxTokenRequest bounds the form of a token request, which holds a few short parameters.
const maxTokenRequest = 16 << 10

// formContentType is the only body a token request may have (RFC 6749 §4.4.2).
const formContentType = "application/x-www-form-urlencoded"

// readTokenRequest parses a token request: the form-encoded body, and the
// client's credentials from HTTP Basic or from the form, never both
// (RFC 6749 §2.3.1, §3.2).
func readTokenRequest(w http.ResponseWriter, r *http.Request) (oauth.TokenRequest, error) {
	bad := func(format string, args ...any) (oauth.TokenRequest, error) {
		return oauth.TokenRequest{}, &oauth.Error{Code: oauth.InvalidRequest, Description: fmt.Sprintf(format, args...)}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != formContentType {
		return bad("the body must be %s", formContentType)
	}
	if r.URL.RawQuery != "" {
		return bad("parameters belong in the form-encoded body, not in the URL")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTokenRequest))
	if err != nil {
		return bad("the body could not be read or is larger than %d bytes", maxTokenRequest)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return bad("the body is not valid %s", formContentType)
	}
	for name, values := range form {
		if len(values) > 1 {
			return bad("parameter %q is sent more than once", oauth.Clip(name))
		}
	}
	req := oauth.TokenRequest{GrantType: form.Get("grant_type"), Scope: form.Get("scope"),
		ClientID: form.Get("client_id"), ClientSecret: form.Get("client_secret")}
	if r.Header.Get("Authorization") == "" {
		return req, nil
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return oauth.TokenRequest{}, &oauth.Error{Code: oauth.InvalidClient,
			Description: "the Authorization header must use the Basic scheme with client_id:client_secret"}
	}
	// Both parts are form-encoded before Basic encoding (RFC 6749 §2.3.1).
	id, errID := url.QueryUnescape(user)
	secret, errSecret := url.QueryUnescape(pass)
	if errID != nil || errSecret != nil {
		return bad("the Basic credentials must be form-encoded client_id and client_secret")
	}
	if form.Has("client_secret") {
		return bad("authenticate the client one way: HTTP Basic or the client_secret parameter, not both")
	}
	if form.Has("client_id") && req.ClientID != id {
		return bad("client_id differs from the client of the Basic credentials")
	}
	req.ClientID, req.ClientSecret = id, secret
	return req, nil
}

// noStore keeps credentials out of caches (RFC 6749 §5.1).
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

// writeOAuthError answers a refused token request: 401 with a Basic
// challenge for invalid_client, 400 otherwise (RFC 6749 §5.2).
func writeOAuthError(w http.ResponseWriter, r *http.Request, e *oauth.Error) {
	noStore(w)
	status := http.StatusBadRequest
	if e.Code == oauth.InvalidClient {
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="flagplane", charset="UTF-8"`)
	}
	api.WriteJSON(w, status, oauthErrorRep{Error: e.Code, Description: e.Description, ID: api.RequestID(r.Context())})
}
