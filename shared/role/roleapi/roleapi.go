// Package roleapi serves the roles group over HTTP: custom roles and the
// policy statements they grant.
package roleapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/role"
)

// New is the roles group over a.
func New(a *app.App) app.Group {
	h := handlers{roles: a.Services.Roles}
	return app.Group{
		Name:     "roles",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getCustomRoles":   h.getCustomRoles,
			"postCustomRole":   h.postCustomRole,
			"getCustomRole":    h.getCustomRole,
			"patchCustomRole":  h.patchCustomRole,
			"deleteCustomRole": h.deleteCustomRole,
		},
		Needs: map[string]api.Needs{
			"patchCustomRole": api.PatchNeeds("a custom role", role.PatchActions),
		},
		Answers: map[string]api.Answer{
			"getCustomRoles":   {Status: http.StatusOK, Rep: rolesRep{}},
			"postCustomRole":   {Status: http.StatusCreated, Rep: roleRep{}},
			"getCustomRole":    {Status: http.StatusOK, Rep: roleRep{}},
			"patchCustomRole":  {Status: http.StatusOK, Rep: roleRep{}},
			"deleteCustomRole": {Status: http.StatusNoContent},
		},
	}
}

// roleRep is a custom role as the API shows it.
type roleRep struct {
	Links           api.Links          `json:"_links"`
	ID              string             `json:"_id"`
	Key             string             `json:"key"`
	Name            string             `json:"name"`
	Description     string             `json:"description"`
	Policy          []policy.Statement `json:"policy"`
	BasePermissions string             `json:"basePermissions"`
	Access          policy.Access      `json:"_access"`
}

func newRoleRep(r *http.Request, ro *role.Role) roleRep {
	return roleRep{
		Links: api.Links{"self": api.JSONLink(role.Href(ro.Key)), "parent": api.JSONLink("/api/v2/roles")},
		ID:    ro.ID, Key: ro.Key, Name: ro.Name, Description: ro.Description, Policy: ro.Policy, BasePermissions: ro.BasePermissions,
		Access: reps.Access(r, policy.NewResource("role", ro.Key), role.Actions),
	}
}

type rolesRep struct {
	Links      api.Links `json:"_links"`
	TotalCount int64     `json:"totalCount"`
	Items      []roleRep `json:"items"`
}

// handlers serve the group's operations.
type handlers struct {
	roles *role.Service
}

func (h handlers) getCustomRoles(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	all, err := h.roles.List(r.Context())
	if err != nil {
		return err
	}
	total := int64(len(all))
	out := rolesRep{TotalCount: total, Items: []roleRep{}, Links: api.OffsetLinks("/api/v2/roles", q, offset, limit, total)}
	for _, ro := range listing.Window(all, offset, limit) {
		out.Items = append(out.Items, newRoleRep(r, ro))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postCustomRole(w http.ResponseWriter, r *http.Request) error {
	var in role.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	ro, err := h.roles.Create(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newRoleRep(r, ro))
	return nil
}

func (h handlers) getCustomRole(w http.ResponseWriter, r *http.Request) error {
	// The reference reads a role by its key or its _id.
	ro, err := h.roles.GetByRef(r.Context(), r.PathValue("customRoleKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRoleRep(r, ro))
	return nil
}

func (h handlers) patchCustomRole(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a custom role")
	if err != nil {
		return err
	}
	ro, err := h.roles.Patch(r.Context(), r.PathValue("customRoleKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRoleRep(r, ro))
	return nil
}

func (h handlers) deleteCustomRole(w http.ResponseWriter, r *http.Request) error {
	if err := h.roles.Delete(r.Context(), r.PathValue("customRoleKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
