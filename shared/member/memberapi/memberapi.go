// Package memberapi serves the members group over HTTP: the account's
// members, their invitations, roles and when they were last seen.
package memberapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
)

// New is the members group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{members: s.Members, tokens: s.Tokens, teams: s.Teams}
	return app.Group{
		Name:     "members",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getMembers":   h.getMembers,
			"postMembers":  h.postMembers,
			"getMember":    h.getMember,
			"patchMember":  h.patchMember,
			"deleteMember": h.deleteMember,
		},
		Needs: map[string]api.Needs{
			"patchMember": api.PatchNeeds("a member", member.PatchActions),
		},
		Answers: map[string]api.Answer{
			"getMembers":   {Status: http.StatusOK, Rep: membersRep{}},
			"postMembers":  {Status: http.StatusCreated, Rep: membersRep{}},
			"getMember":    {Status: http.StatusOK, Rep: memberRep{}},
			"patchMember":  {Status: http.StatusOK, Rep: memberRep{}},
			"deleteMember": {Status: http.StatusNoContent},
		},
	}
}

// handlers serve the group's operations: members, with when their tokens
// were last used, and the teams a removed member leaves.
type handlers struct {
	members *member.Service
	tokens  *token.Service
	teams   *team.Service
}

// memberRep is a member as the API shows it: the reference's Member, its
// timestamps integers as the reference has them (the spec does not list
// them).
type memberRep struct {
	Links         api.Links `json:"_links"`
	ID            string    `json:"_id"`
	Email         string    `json:"email"`
	FirstName     string    `json:"firstName"`
	LastName      string    `json:"lastName"`
	Role          string    `json:"role"`
	CustomRoles   []string  `json:"customRoles"`
	PendingInvite bool      `json:"_pendingInvite"`
	Verified      bool      `json:"_verified"`
	CreationDate  int64     `json:"creationDate"`
	// LastSeen is when one of the member's access tokens was last used,
	// 0 when none has been since flagplane began recording it; the
	// metadata names that token.
	LastSeen         int64             `json:"_lastSeen"`
	LastSeenMetadata *lastSeenMetadata `json:"_lastSeenMetadata,omitempty"`
	// MFA is "disabled": flagplane has no sign-in, so no second factor.
	MFA    string        `json:"mfa"`
	Access policy.Access `json:"_access"`
}

// lastSeenMetadata is LastSeenMetadata.
type lastSeenMetadata struct {
	TokenID string `json:"tokenId"`
}

func newMemberRep(r *http.Request, m *member.Member, seen token.LastSeen) memberRep {
	rep := memberRep{
		Links: api.Self(member.Href(m.ID)), ID: m.ID, Email: m.Email, FirstName: m.FirstName, LastName: m.LastName,
		Role: m.Role, CustomRoles: m.CustomRoles, PendingInvite: m.PendingInvite, Verified: m.Verified, CreationDate: m.CreationDate,
		LastSeen: seen.At, MFA: "disabled",
		Access: reps.Access(r, policy.NewResource("member", m.ID), member.Actions),
	}
	if seen.TokenID != "" {
		rep.LastSeenMetadata = &lastSeenMetadata{TokenID: seen.TokenID}
	}
	return rep
}

type membersRep struct {
	Links      api.Links   `json:"_links"`
	TotalCount int64       `json:"totalCount"`
	Items      []memberRep `json:"items"`
}

// memberFilter is the list's filter, as the reference defines it: query
// (email or name, ignoring case), role ("|"-separated built-in roles and
// custom role keys, any of which the member holds; owner counts as admin),
// id and email ("|"-separated, any of), team (the key of a team the member
// is on, ignoring case) and noteam (true: on no team; false: on one).
// teams are listed only when the filter needs them.
func (h handlers) memberFilter(r *http.Request, raw string) (func(*member.Member) bool, error) {
	f, err := listing.ParseFilter(raw, "query", "role", "id", "email", "team", "noteam")
	if err != nil {
		return nil, err
	}
	anyOf := func(field string, values func(*member.Member) []string) listing.Predicate[*member.Member] {
		raw, ok := f[field]
		if !ok {
			return nil
		}
		want := strings.Split(strings.ToLower(raw), "|")
		return func(m *member.Member) bool {
			return slices.ContainsFunc(values(m), func(v string) bool { return slices.Contains(want, strings.ToLower(v)) })
		}
	}
	roles := anyOf("role", func(m *member.Member) []string {
		held := append([]string{m.Role}, m.CustomRoles...)
		if m.Role == "owner" {
			held = append(held, "admin")
		}
		return held
	})
	ids := anyOf("id", func(m *member.Member) []string { return []string{m.ID} })
	emails := anyOf("email", func(m *member.Member) []string { return []string{m.Email} })
	query := listing.Text(f, "query", func(m *member.Member) []string {
		return []string{m.Email, m.FirstName, m.LastName, m.FirstName + " " + m.LastName}
	})
	var onTeam, noTeam listing.Predicate[*member.Member]
	teamKey, byTeam := f["team"]
	_, byNoTeam := f["noteam"]
	if byTeam || byNoTeam {
		teams, err := h.teams.List(r.Context())
		if err != nil {
			return nil, err
		}
		inTeam := map[string]bool{} // members of the filter's team
		inAny := map[string]bool{}  // members of any team
		for _, t := range teams {
			for _, id := range t.MemberIDs {
				inAny[id] = true
				if strings.EqualFold(t.Key, teamKey) {
					inTeam[id] = true
				}
			}
		}
		if byTeam {
			onTeam = func(m *member.Member) bool { return inTeam[m.ID] }
		}
		if noTeam, err = listing.Choice(f, "noteam",
			listing.Option[*member.Member]{Value: "true", Keep: func(m *member.Member) bool { return !inAny[m.ID] }},
			listing.Option[*member.Member]{Value: "false", Keep: func(m *member.Member) bool { return inAny[m.ID] }}); err != nil {
			return nil, err
		}
	}
	return listing.All(query, roles, ids, emails, onTeam, noTeam), nil
}

// memberID is the member a path's id names: "me" is the caller's own.
func memberID(r *http.Request) string {
	id := r.PathValue("id")
	if p, _ := identity.From(r.Context()); id == "me" && p.MemberID != "" {
		return p.MemberID
	}
	return id
}

// one answers a single member, with when it was last seen.
func (h handlers) one(w http.ResponseWriter, r *http.Request, m *member.Member) error {
	seen, _, err := h.tokens.MemberLastSeen(r.Context(), m.ID)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newMemberRep(r, m, seen))
	return nil
}

func (h handlers) getMembers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	keep, err := h.memberFilter(r, q.Get("filter"))
	if err != nil {
		return err
	}
	all, err := h.members.List(r.Context())
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(m *member.Member) bool { return !keep(m) })
	page := listing.Window(all, offset, limit)
	seen := map[string]token.LastSeen{}
	if len(page) > 0 {
		if seen, err = h.tokens.MembersLastSeen(r.Context()); err != nil {
			return err
		}
	}
	total := int64(len(all))
	out := membersRep{TotalCount: total, Items: []memberRep{}, Links: api.OffsetLinks("/api/v2/members", q, offset, limit, total)}
	for _, m := range page {
		out.Items = append(out.Items, newMemberRep(r, m, seen[m.ID]))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postMembers(w http.ResponseWriter, r *http.Request) error {
	var in []member.Invite
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	created, err := h.members.Invite(r.Context(), in)
	if err != nil {
		return err
	}
	out := membersRep{TotalCount: int64(len(created)), Items: []memberRep{}, Links: api.Self("/api/v2/members")}
	for _, m := range created {
		out.Items = append(out.Items, newMemberRep(r, m, token.LastSeen{})) // new: never seen
	}
	api.WriteJSON(w, http.StatusCreated, out)
	return nil
}

func (h handlers) getMember(w http.ResponseWriter, r *http.Request) error {
	m, err := h.members.Get(r.Context(), memberID(r))
	if err != nil {
		return err
	}
	return h.one(w, r, m)
}

func (h handlers) patchMember(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a member")
	if err != nil {
		return err
	}
	m, err := h.members.Patch(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return h.one(w, r, m)
}

func (h handlers) deleteMember(w http.ResponseWriter, r *http.Request) error {
	// The member leaves its teams in the same transaction.
	leave, err := h.teams.WithoutMember(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := h.members.Delete(r.Context(), r.PathValue("id"), leave...); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
