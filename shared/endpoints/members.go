package endpoints

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/policy"
)

// memberRep is a member as the API shows it.
type memberRep struct {
	Links         api.Links     `json:"_links"`
	ID            string        `json:"_id"`
	Email         string        `json:"email"`
	FirstName     string        `json:"firstName"`
	LastName      string        `json:"lastName"`
	Role          string        `json:"role"`
	CustomRoles   []string      `json:"customRoles"`
	PendingInvite bool          `json:"_pendingInvite"`
	Verified      bool          `json:"_verified"`
	CreationDate  int64         `json:"_creationDate"`
	Access        policy.Access `json:"_access"`
}

func newMemberRep(r *http.Request, m *member.Member) memberRep {
	return memberRep{
		Links: api.Self(member.Href(m.ID)), ID: m.ID, Email: m.Email, FirstName: m.FirstName, LastName: m.LastName,
		Role: m.Role, CustomRoles: m.CustomRoles, PendingInvite: m.PendingInvite, Verified: m.Verified, CreationDate: m.CreationDate,
		Access: accessOf(r, policy.NewResource("member", m.ID), member.Actions),
	}
}

type membersRep struct {
	Links      api.Links   `json:"_links"`
	TotalCount int64       `json:"totalCount"`
	Items      []memberRep `json:"items"`
}

func memberHandlers(s Services) map[string]api.Handler {
	members := s.Members
	return map[string]api.Handler{
		"getMembers": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, MaxPage)
			if err != nil {
				return err
			}
			all, err := members.List(r.Context())
			if err != nil {
				return err
			}
			total := int64(len(all))
			out := membersRep{TotalCount: total, Items: []memberRep{}, Links: api.OffsetLinks("/api/v2/members", q, offset, limit, total)}
			for _, m := range listing.Window(all, offset, limit) {
				out.Items = append(out.Items, newMemberRep(r, m))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postMembers": func(w http.ResponseWriter, r *http.Request) error {
			var in []member.Invite
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			created, err := members.Invite(r.Context(), in)
			if err != nil {
				return err
			}
			out := membersRep{TotalCount: int64(len(created)), Items: []memberRep{}, Links: api.Self("/api/v2/members")}
			for _, m := range created {
				out.Items = append(out.Items, newMemberRep(r, m))
			}
			api.WriteJSON(w, http.StatusCreated, out)
			return nil
		},
		"getMember": func(w http.ResponseWriter, r *http.Request) error {
			m, err := members.Get(r.Context(), r.PathValue("id"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newMemberRep(r, m))
			return nil
		},
		"patchMember": func(w http.ResponseWriter, r *http.Request) error {
			p, err := readPatch(w, r)
			if err != nil {
				return err
			}
			m, err := members.Patch(r.Context(), r.PathValue("id"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newMemberRep(r, m))
			return nil
		},
		"deleteMember": func(w http.ResponseWriter, r *http.Request) error {
			if err := members.Delete(r.Context(), r.PathValue("id")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
