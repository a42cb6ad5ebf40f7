// Package tokenapi serves the tokens group over HTTP: access tokens, their
// roles, and the reset that replaces a token's value.
package tokenapi

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/token"
)

// New is the tokens group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{tokens: s.Tokens, members: s.Members}
	return app.Group{
		Name:     "tokens",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getTokens":   h.getTokens,
			"postToken":   h.postToken,
			"getToken":    h.getToken,
			"patchToken":  h.patchToken,
			"deleteToken": h.deleteToken,
			"resetToken":  h.resetToken,
		},
		Needs: map[string]api.Needs{
			"patchToken": api.PatchNeeds("an access token", token.PatchActions),
		},
		Answers: map[string]api.Answer{
			"getTokens":   {Status: http.StatusOK, Rep: tokensRep{}},
			"postToken":   {Status: http.StatusCreated, Rep: tokenRep{}},
			"getToken":    {Status: http.StatusOK, Rep: tokenRep{}},
			"patchToken":  {Status: http.StatusOK, Rep: tokenRep{}},
			"deleteToken": {Status: http.StatusNoContent},
			"resetToken":  {Status: http.StatusOK, Rep: tokenRep{}},
		},
	}
}

// tokenMemberRep is the member a token belongs to.
type tokenMemberRep struct {
	Links     api.Links `json:"_links"`
	ID        string    `json:"_id"`
	FirstName string    `json:"firstName"`
	LastName  string    `json:"lastName"`
	Role      string    `json:"role"`
	Email     string    `json:"email"`
}

// tokenRep is an access token as the API shows it (spec 2.10). Token holds
// the whole value only in the create and reset answers; later its last four
// characters. Its timestamps are Unix milliseconds as JSON strings, as the
// spec types them (integers for a dated LD-API-Version); lastUsed and expiry are
// left out while the token was never used or never expires.
type tokenRep struct {
	Links             api.Links            `json:"_links"`
	ID                string               `json:"_id"`
	OwnerID           string               `json:"ownerId"`
	MemberID          string               `json:"memberId"`
	Member            *tokenMemberRep      `json:"_member,omitempty"`
	Name              string               `json:"name"`
	Description       string               `json:"description"`
	CreationDate      jsondoc.MillisString `json:"creationDate"`
	LastModified      jsondoc.MillisString `json:"lastModified"`
	CustomRoleIDs     []string             `json:"customRoleIds"`
	InlineRole        []policy.Statement   `json:"inlineRole"`
	Role              string               `json:"role,omitempty"`
	Token             string               `json:"token"`
	ServiceToken      bool                 `json:"serviceToken"`
	DefaultAPIVersion int                  `json:"defaultApiVersion"`
	LastUsed          jsondoc.MillisString `json:"lastUsed,omitempty"`
	Expiry            jsondoc.MillisString `json:"expiry,omitempty"`
	Access            policy.Access        `json:"_access"`
}

func newTokenRep(r *http.Request, t token.Token, m *member.Member, value string) tokenRep {
	if value == "" {
		value = t.Ending
	}
	owner := t.MemberID
	if owner == "" {
		owner = "*"
	}
	rep := tokenRep{
		Links: api.Links{"self": api.JSONLink(token.Href(t.ID)), "parent": api.JSONLink("/api/v2/tokens")},
		ID:    t.ID, OwnerID: t.OwnerID, MemberID: t.MemberID, Name: t.Name, Description: t.Description,
		CreationDate: jsondoc.MillisString(t.CreationDate), LastModified: jsondoc.MillisString(t.LastModified), CustomRoleIDs: t.CustomRoleIDs, InlineRole: t.InlineRole,
		Role: string(t.Role), Token: value, ServiceToken: t.ServiceToken, DefaultAPIVersion: t.DefaultAPIVersion,
		LastUsed: jsondoc.MillisString(t.LastUsed), Expiry: jsondoc.MillisString(t.Expiry),
		Access: reps.Access(r, policy.NewResource("member", owner).Child("token", t.ID), token.Actions),
	}
	if rep.InlineRole == nil {
		rep.InlineRole = []policy.Statement{}
	}
	if m != nil {
		rep.Member = &tokenMemberRep{Links: api.Self(member.Href(m.ID)), ID: m.ID, FirstName: m.FirstName, LastName: m.LastName, Role: m.Role, Email: m.Email}
	}
	return rep
}

type tokensRep struct {
	Links      api.Links  `json:"_links"`
	TotalCount int64      `json:"totalCount"`
	Items      []tokenRep `json:"items"`
}

// handlers serve the group's operations: tokens, with the members they
// belong to.
type handlers struct {
	tokens  *token.Service
	members *member.Service
}

// memberOf is the member a token belongs to, nil for a service token or
// one whose member cannot be read: the token is shown without it.
func (h handlers) memberOf(r *http.Request, t token.Token) *member.Member {
	if t.MemberID == "" {
		return nil
	}
	m, err := h.members.Get(r.Context(), t.MemberID)
	if err != nil {
		return nil
	}
	return m
}

func (h handlers) getTokens(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	all, err := api.BoolParam(q, "showAll", false)
	if err != nil {
		return err
	}
	if p, _ := identity.From(r.Context()); all && !token.IsAdmin(p) {
		return fault.New(fault.Forbidden, "showAll lists every member's tokens and needs the admin or owner role, for the token and its member")
	}
	list, err := h.tokens.List(r.Context(), all)
	if err != nil {
		return err
	}
	byID := map[string]*member.Member{}
	if ms, err := h.members.List(r.Context()); err == nil {
		for _, m := range ms {
			byID[m.ID] = m
		}
	}
	total := int64(len(list))
	out := tokensRep{TotalCount: total, Items: []tokenRep{}, Links: api.OffsetLinks("/api/v2/tokens", q, offset, limit, total)}
	for _, t := range listing.Window(list, offset, limit) {
		out.Items = append(out.Items, newTokenRep(r, t, byID[t.MemberID], ""))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postToken(w http.ResponseWriter, r *http.Request) error {
	var in token.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	t, value, err := h.tokens.CreateFor(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newTokenRep(r, t, h.memberOf(r, t), value))
	return nil
}

func (h handlers) getToken(w http.ResponseWriter, r *http.Request) error {
	t, err := h.tokens.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newTokenRep(r, t, h.memberOf(r, t), ""))
	return nil
}

func (h handlers) patchToken(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an access token")
	if err != nil {
		return err
	}
	t, err := h.tokens.Patch(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newTokenRep(r, t, h.memberOf(r, t), ""))
	return nil
}

func (h handlers) deleteToken(w http.ResponseWriter, r *http.Request) error {
	if err := h.tokens.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) resetToken(w http.ResponseWriter, r *http.Request) error {
	expiry, err := resetExpiry(w, r)
	if err != nil {
		return err
	}
	t, value, err := h.tokens.Reset(r.Context(), r.PathValue("id"), expiry)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newTokenRep(r, t, h.memberOf(r, t), value))
	return nil
}

// resetExpiry reads when a reset's old value stops working: the reference's
// query parameter "expiry", or a body {"expiry": ...} (a number or a
// numeric string, the form the spec gives the token's own expiry); not
// both. 0: at once.
func resetExpiry(w http.ResponseWriter, r *http.Request) (int64, error) {
	q := r.URL.Query()
	fromQuery, err := api.IntParam(q, "expiry", 0, 0, 1<<62)
	if err != nil {
		return 0, err
	}
	if r.Body == nil || r.ContentLength == 0 {
		return fromQuery, nil
	}
	body, err := api.ReadBody(w, r)
	if fault.Is(err, fault.Invalid) && len(body) == 0 {
		return fromQuery, nil // an empty body: the query decides
	}
	if err != nil {
		return 0, err
	}
	var in struct {
		Expiry json.RawMessage `json:"expiry"`
	}
	if err := jsondoc.Unmarshal(body, &in); err != nil {
		return 0, err
	}
	fromBody, err := token.ParseMillis("expiry", in.Expiry)
	if err != nil {
		return 0, err
	}
	if fromBody != 0 && q.Has("expiry") {
		return 0, fault.New(fault.Invalid, "give \"expiry\" once: as the query parameter or in the body, not both")
	}
	return max(fromQuery, fromBody), nil
}
