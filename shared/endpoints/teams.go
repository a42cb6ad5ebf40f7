package endpoints

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/team"
)

// teamRep is a team as the API shows it.
type teamRep struct {
	Links          api.Links     `json:"_links"`
	Key            string        `json:"key"`
	Name           string        `json:"name"`
	Description    string        `json:"description"`
	CustomRoleKeys []string      `json:"customRoleKeys"`
	MemberIDs      []string      `json:"memberIds"`
	CreationDate   int64         `json:"_creationDate"`
	Access         policy.Access `json:"_access"`
}

func newTeamRep(r *http.Request, t *team.Team) teamRep {
	return teamRep{
		Links: api.Links{"self": api.JSONLink(team.Href(t.Key)), "parent": api.JSONLink("/api/v2/teams")},
		Key:   t.Key, Name: t.Name, Description: t.Description, CustomRoleKeys: t.CustomRoleKeys, MemberIDs: t.MemberIDs,
		CreationDate: t.CreationDate, Access: accessOf(r, policy.NewResource("team", t.Key), team.Actions),
	}
}

type teamsRep struct {
	Links      api.Links `json:"_links"`
	TotalCount int64     `json:"totalCount"`
	Items      []teamRep `json:"items"`
}

func teamHandlers(s Services) map[string]api.Handler {
	teams := s.Teams
	return map[string]api.Handler{
		"getTeams": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, MaxPage)
			if err != nil {
				return err
			}
			all, err := teams.List(r.Context())
			if err != nil {
				return err
			}
			total := int64(len(all))
			out := teamsRep{TotalCount: total, Items: []teamRep{}, Links: api.OffsetLinks("/api/v2/teams", q, offset, limit, total)}
			for _, t := range listing.Window(all, offset, limit) {
				out.Items = append(out.Items, newTeamRep(r, t))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postTeam": func(w http.ResponseWriter, r *http.Request) error {
			var in team.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			t, err := teams.Create(r.Context(), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newTeamRep(r, t))
			return nil
		},
		"getTeam": func(w http.ResponseWriter, r *http.Request) error {
			t, err := teams.Get(r.Context(), r.PathValue("teamKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newTeamRep(r, t))
			return nil
		},
		"patchTeam": func(w http.ResponseWriter, r *http.Request) error {
			p, err := readPatch(w, r)
			if err != nil {
				return err
			}
			t, err := teams.Patch(r.Context(), r.PathValue("teamKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newTeamRep(r, t))
			return nil
		},
		"deleteTeam": func(w http.ResponseWriter, r *http.Request) error {
			if err := teams.Delete(r.Context(), r.PathValue("teamKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
