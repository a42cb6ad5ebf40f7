// Package teamapi serves the teams group over HTTP: teams, their members
// and custom roles, changed by JSON patch or semantic patch.
package teamapi

import (
	"net/http"
	"slices"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/team"
)

// New is the teams group over a.
func New(a *app.App) app.Group {
	h := handlers{teams: a.Services.Teams}
	return app.Group{
		Name:     "teams",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getTeams":           h.getTeams,
			"postTeam":           h.postTeam,
			"getTeam":            h.getTeam,
			"patchTeam":          h.patchTeam,
			"deleteTeam":         h.deleteTeam,
			"getTeamRoles":       h.getTeamRoles,
			"getTeamMaintainers": h.getTeamMaintainers,
		},
		Needs: map[string]api.Needs{"patchTeam": teamPatchNeeds},
		Answers: map[string]api.Answer{
			"getTeams":           {Status: http.StatusOK, Rep: teamsRep{}},
			"postTeam":           {Status: http.StatusCreated, Rep: teamRep{}},
			"getTeam":            {Status: http.StatusOK, Rep: teamRep{}},
			"patchTeam":          {Status: http.StatusOK, Rep: teamRep{}},
			"deleteTeam":         {Status: http.StatusNoContent},
			"getTeamRoles":       {Status: http.StatusOK, Rep: teamRolesRep{}},
			"getTeamMaintainers": {Status: http.StatusOK, Rep: teamMaintainersRep{}},
		},
	}
}

// teamRep is a team as the API shows it: the reference's Team (its
// timestamps integers, as the reference has them; the spec does not list
// them), plus the member ids flagplane keeps on the team. The expansions
// appear when `expand` asks for them.
type teamRep struct {
	Links          api.Links     `json:"_links"`
	Key            string        `json:"key"`
	Name           string        `json:"name"`
	Description    string        `json:"description"`
	CustomRoleKeys []string      `json:"customRoleKeys"`
	MemberIDs      []string      `json:"memberIds"`
	CreationDate   int64         `json:"_creationDate"`
	LastModified   int64         `json:"_lastModified"`
	Version        int64         `json:"_version"`
	Access         policy.Access `json:"_access"`

	Members        *teamMembersRep      `json:"members,omitempty"`
	Roles          *teamRolesRep        `json:"roles,omitempty"`
	Maintainers    *teamMaintainersRep  `json:"maintainers,omitempty"`
	RoleAttributes *map[string][]string `json:"roleAttributes,omitempty"`
}

// teamMembersRep is TeamMembers: how many members the team has.
type teamMembersRep struct {
	TotalCount int `json:"totalCount"`
}

// teamRoleRep is TeamCustomRole. The reference's appliedOn and projects
// are left out: flagplane keeps neither when a role was given to a team nor
// which projects it reaches.
type teamRoleRep struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// teamRolesRep is TeamCustomRoles, a page of a team's custom roles.
type teamRolesRep struct {
	TotalCount int           `json:"totalCount"`
	Items      []teamRoleRep `json:"items"`
	Links      api.Links     `json:"_links"`
}

// memberSummaryRep is MemberSummary.
type memberSummaryRep struct {
	Links     api.Links `json:"_links"`
	ID        string    `json:"_id"`
	FirstName string    `json:"firstName"`
	LastName  string    `json:"lastName"`
	Role      string    `json:"role"`
	Email     string    `json:"email"`
}

// teamMaintainersRep is TeamMaintainers. Maintainers are permission grants,
// which flagplane does not model and refuses to set, so the list is empty.
type teamMaintainersRep struct {
	TotalCount int                `json:"totalCount"`
	Items      []memberSummaryRep `json:"items"`
	Links      api.Links          `json:"_links"`
}

// teamExpansions are the names `expand` takes on team reads and updates.
// projects is the reference's too, and accepted, but not shown: flagplane
// does not work out which projects a team's roles reach.
var teamExpansions = []string{"members", "roles", "roleAttributes", "projects", "maintainers"}

// teamRolesPage is a page of the team's custom roles.
func teamRolesPage(r *http.Request, teams *team.Service, t *team.Team, q map[string][]string, offset, limit int64) (*teamRolesRep, error) {
	roles, err := teams.Roles(r.Context(), t)
	if err != nil {
		return nil, err
	}
	total := int64(len(roles))
	out := &teamRolesRep{TotalCount: len(roles), Items: []teamRoleRep{},
		Links: api.OffsetLinks(team.Href(t.Key)+"/roles", q, offset, limit, total)}
	for _, ro := range listing.Window(roles, offset, limit) {
		out.Items = append(out.Items, teamRoleRep{Key: ro.Key, Name: ro.Name})
	}
	return out, nil
}

// teamMaintainersPage is a page of the team's maintainers: none.
func teamMaintainersPage(t *team.Team, q map[string][]string, offset, limit int64) *teamMaintainersRep {
	return &teamMaintainersRep{Items: []memberSummaryRep{}, Links: api.OffsetLinks(team.Href(t.Key)+"/maintainers", q, offset, limit, 0)}
}

func newTeamRep(r *http.Request, teams *team.Service, t *team.Team, expand map[string]bool) (teamRep, error) {
	rep := teamRep{
		Links: api.Links{"self": api.JSONLink(team.Href(t.Key)), "parent": api.JSONLink("/api/v2/teams"),
			"roles": api.JSONLink(team.Href(t.Key) + "/roles")},
		Key: t.Key, Name: t.Name, Description: t.Description, CustomRoleKeys: t.CustomRoleKeys, MemberIDs: t.MemberIDs,
		CreationDate: t.CreationDate, LastModified: t.Modified(), Version: t.Version,
		Access: reps.Access(r, policy.NewResource("team", t.Key), team.Actions),
	}
	if expand["members"] {
		rep.Members = &teamMembersRep{TotalCount: len(t.MemberIDs)}
	}
	if expand["roles"] {
		roles, err := teamRolesPage(r, teams, t, map[string][]string{}, 0, 25)
		if err != nil {
			return rep, err
		}
		rep.Roles = roles
	}
	if expand["maintainers"] {
		rep.Maintainers = teamMaintainersPage(t, map[string][]string{}, 0, 20)
	}
	if expand["roleAttributes"] {
		rep.RoleAttributes = &map[string][]string{} // none can be set
	}
	return rep, nil
}

type teamsRep struct {
	Links      api.Links `json:"_links"`
	TotalCount int64     `json:"totalCount"`
	Items      []teamRep `json:"items"`
}

// teamFilter is the list's filter: query (name or key, ignoring case) and
// nomembers (true: teams without members; false: with).
func teamFilter(raw string) (func(*team.Team) bool, error) {
	f, err := listing.ParseFilter(raw, "query", "nomembers")
	if err != nil {
		return nil, err
	}
	empty, err := listing.Choice(f, "nomembers",
		listing.Option[*team.Team]{Value: "true", Keep: func(t *team.Team) bool { return len(t.MemberIDs) == 0 }},
		listing.Option[*team.Team]{Value: "false", Keep: func(t *team.Team) bool { return len(t.MemberIDs) > 0 }})
	if err != nil {
		return nil, err
	}
	return listing.All(listing.Text(f, "query", func(t *team.Team) []string { return []string{t.Key, t.Name} }), empty), nil
}

// isTeamSemanticPatch tells a team update's form: a semantic patch when
// the Content-Type says so or when the body is an object with
// "instructions" (the reference updates teams by semantic patch only, and
// its Go client sends plain application/json); a JSON patch otherwise.
func isTeamSemanticPatch(r *http.Request, body []byte) bool {
	return api.IsSemanticPatch(r) || semanticpatch.HasInstructions(body)
}

// teamPatchNeeds is what a team update needs: the action of each
// instruction of a semantic patch, or of each path of a JSON patch.
func teamPatchNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	if isTeamSemanticPatch(r, body) {
		sp, err := semanticpatch.Parse(body)
		if err != nil {
			return nil, err
		}
		list, err := team.InstructionActions(sp.Instructions)
		if err != nil {
			return nil, err
		}
		return api.ActionNeeds(list...), nil
	}
	p, err := patch.Parse(body)
	if err != nil {
		return nil, err
	}
	list, err := team.PatchActions(p)
	if err != nil {
		return nil, err
	}
	return api.ActionNeeds(list...), nil
}

// handlers serve the group's operations.
type handlers struct {
	teams *team.Service
}

// answer writes a team with the expansions the request asks for.
func (h handlers) answer(w http.ResponseWriter, r *http.Request, status int, t *team.Team) error {
	expand, err := api.Expand(r.URL.Query(), teamExpansions...)
	if err != nil {
		return err
	}
	rep, err := newTeamRep(r, h.teams, t, expand)
	if err != nil {
		return err
	}
	api.WriteJSON(w, status, rep)
	return nil
}

func (h handlers) getTeams(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	keep, err := teamFilter(q.Get("filter"))
	if err != nil {
		return err
	}
	expand, err := api.Expand(q, teamExpansions...)
	if err != nil {
		return err
	}
	all, err := h.teams.List(r.Context())
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(t *team.Team) bool { return !keep(t) })
	total := int64(len(all))
	out := teamsRep{TotalCount: total, Items: []teamRep{}, Links: api.OffsetLinks("/api/v2/teams", q, offset, limit, total)}
	for _, t := range listing.Window(all, offset, limit) {
		rep, err := newTeamRep(r, h.teams, t, expand)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postTeam(w http.ResponseWriter, r *http.Request) error {
	var in team.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	t, err := h.teams.Create(r.Context(), in)
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusCreated, t)
}

func (h handlers) getTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := h.teams.Get(r.Context(), r.PathValue("teamKey"))
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusOK, t)
}

func (h handlers) patchTeam(w http.ResponseWriter, r *http.Request) error {
	// A bad expansion is refused before anything changes.
	if _, err := api.Expand(r.URL.Query(), teamExpansions...); err != nil {
		return err
	}
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	var t *team.Team
	if isTeamSemanticPatch(r, body) {
		sp, err := semanticpatch.Parse(body)
		if err != nil {
			return err
		}
		if t, err = h.teams.SemanticPatch(r.Context(), r.PathValue("teamKey"), sp); err != nil {
			return err
		}
	} else {
		p, err := patch.Parse(body)
		if err != nil {
			return err
		}
		if t, err = h.teams.Patch(r.Context(), r.PathValue("teamKey"), p); err != nil {
			return err
		}
	}
	return h.answer(w, r, http.StatusOK, t)
}

func (h handlers) deleteTeam(w http.ResponseWriter, r *http.Request) error {
	if err := h.teams.Delete(r.Context(), r.PathValue("teamKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getTeamRoles(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	t, err := h.teams.Get(r.Context(), r.PathValue("teamKey"))
	if err != nil {
		return err
	}
	page, err := teamRolesPage(r, h.teams, t, q, offset, limit)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h handlers) getTeamMaintainers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	t, err := h.teams.Get(r.Context(), r.PathValue("teamKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, teamMaintainersPage(t, q, offset, limit))
	return nil
}
