// Package approvalapi serves the approvals group: requests to change a
// flag (or an AI Config) in an environment that requires approval, their
// reviews, and applying them.
package approvalapi

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// New is the approvals group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{approvals: s.Approvals, flags: s.Flags, segments: s.Segments, projects: s.Projects, envs: s.Environments}
	ok := api.Answer{Status: http.StatusOK, Rep: approvalRep{}}
	return app.Group{
		Name:     "approvals",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getApprovalRequests":       h.getApprovalRequests,
			"postApprovalRequest":       h.postApprovalRequest,
			"getApprovalRequest":        h.getApprovalRequest,
			"deleteApprovalRequest":     h.deleteApprovalRequest,
			"patchApprovalRequest":      h.patchApprovalRequest,
			"postApprovalRequestReview": h.postApprovalRequestReview,
			"postApprovalRequestApply":  h.postApprovalRequestApply,
		},
		Needs: map[string]api.Needs{
			"getApprovalRequest":        h.storedNeeds,
			"postApprovalRequest":       approvalCreateNeeds,
			"postApprovalRequestReview": h.storedNeeds,
			"postApprovalRequestApply":  h.storedNeeds,
			"deleteApprovalRequest":     h.storedNeeds,
			"patchApprovalRequest":      h.storedNeeds,
		},
		Answers: map[string]api.Answer{
			"getApprovalRequests":       {Status: http.StatusOK, Rep: approvalsRep{}},
			"postApprovalRequest":       {Status: http.StatusCreated, Rep: approvalRep{}},
			"getApprovalRequest":        ok,
			"deleteApprovalRequest":     {Status: http.StatusNoContent},
			"patchApprovalRequest":      ok,
			"postApprovalRequestReview": ok,
			"postApprovalRequestApply":  ok,
		},
	}
}

// handlers are the approvals group's operations, over the services a
// request's answer reads: its flag or segment, project and environment.
type handlers struct {
	approvals *approval.Service
	flags     *flag.Service
	segments  *segment.Service
	projects  *project.Service
	envs      *environment.Service
}

// maxApprovalPage is the reference's largest page of approval requests.
const maxApprovalPage = 200

func (h handlers) getApprovalRequests(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, maxApprovalPage)
	if err != nil {
		return err
	}
	v, err := h.view(r, "flag", "project", "environments")
	if err != nil {
		return err
	}
	all, err := h.approvals.List(r.Context(), q.Get("filter"))
	if err != nil {
		return err
	}
	// Requests on what the caller may not read are left out before
	// counting and paging, so totalCount counts what is shown.
	shown := all[:0:0]
	for _, a := range all {
		if api.MayView(r, approvalResource(a.Kind(), a.ProjectKey, a.EnvironmentKey, a.Key()), identity.ViewAction) {
			shown = append(shown, a)
		}
	}
	total := int64(len(shown))
	out := approvalsRep{TotalCount: total, Items: []approvalRep{}, Links: api.OffsetLinks(approval.CollectionHref, q, offset, limit, total)}
	for _, a := range listing.Window(shown, offset, limit) {
		rep, err := v.rep(a)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postApprovalRequest(w http.ResponseWriter, r *http.Request) error {
	var in approval.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	a, err := h.approvals.Create(r.Context(), in)
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusCreated, a)
}

func (h handlers) getApprovalRequest(w http.ResponseWriter, r *http.Request) error {
	a, err := h.approvals.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := h.view(r, "environments", "flag", "project", "resource")
	if err != nil {
		return err
	}
	return v.write(w, http.StatusOK, a)
}

func (h handlers) deleteApprovalRequest(w http.ResponseWriter, r *http.Request) error {
	if err := h.approvals.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// patchApprovalRequest: the reference's body is a semantic patch
// (addReviewers, updateDescription), declared as plain application/json:
// the domain-model parameter may be given or left out.
func (h handlers) patchApprovalRequest(w http.ResponseWriter, r *http.Request) error {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	sp, err := semanticpatch.Parse(body)
	if err != nil {
		return err
	}
	a, err := h.approvals.Patch(r.Context(), r.PathValue("id"), sp)
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusOK, a)
}

func (h handlers) postApprovalRequestReview(w http.ResponseWriter, r *http.Request) error {
	var in approval.ReviewInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	a, err := h.approvals.Review(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusOK, a)
}

func (h handlers) postApprovalRequestApply(w http.ResponseWriter, r *http.Request) error {
	var in approval.ApplyInput
	if r.ContentLength != 0 {
		if err := api.Decode(w, r, &in); err != nil {
			return err
		}
	}
	a, err := h.approvals.Apply(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return h.answer(w, r, http.StatusOK, a)
}

// answer writes a changed request, unexpanded: a change takes no expand.
func (h handlers) answer(w http.ResponseWriter, r *http.Request, status int, a *approval.Request) error {
	v := &approvalView{h: h, r: r, flags: map[string]*flag.Flag{}, dets: map[string]*flag.Detail{}}
	return v.write(w, status, a)
}

// approvalCreateNeeds authorizes a new approval request on the flag and
// environment its resourceId names. A body without a usable resourceId
// needs the right on proj/*:env/*:flag/*, and the handler then answers 400.
func approvalCreateNeeds(_ *http.Request, body []byte) ([]api.Need, error) {
	var probe struct {
		ResourceID string `json:"resourceId"`
	}
	_ = json.Unmarshal(body, &probe)
	t, err := approval.ParseTarget(probe.ResourceID)
	if err != nil {
		return []api.Need{{}}, nil
	}
	return []api.Need{approvalNeed(t.Kind, t.ProjectKey, t.EnvironmentKey, t.Key)}, nil
}

// approvalNeed is the right an approval request needs: on its resource.
func approvalNeed(kind, projectKey, envKey, key string) api.Need {
	res := approvalResource(kind, projectKey, envKey, key)
	return api.Need{On: &res}
}

// approvalResource is what an approval request acts on: its flag in its
// environment (proj/<p>:env/<e>:flag/<key>, the operations' own resource
// proj/*:env/*:flag/* narrowed), or for an AI Config
// proj/<p>:env/<e>:aiconfig/<key>, for a segment
// proj/<p>:env/<e>:segment/<key>: the resource kinds are the request's.
func approvalResource(kind, projectKey, envKey, key string) policy.Resource {
	return policy.NewResource("proj", projectKey).Child("env", envKey).Child(kind, key)
}

// storedNeeds authorizes reading, reviewing, applying or deleting a
// request on the flag and environment the stored request acts on, so a
// role limited to staging reviews staging's requests only, and one denied
// a project reads none of its requests. A request that does not exist
// needs the right on proj/*:env/*:flag/*: a caller without it learns
// nothing (403), one with it gets the handler's 404.
func (h handlers) storedNeeds(r *http.Request, _ []byte) ([]api.Need, error) {
	a, err := h.approvals.Get(r.Context(), r.PathValue("id"))
	if fault.Is(err, fault.NotFound) {
		return []api.Need{{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return []api.Need{approvalNeed(a.Kind(), a.ProjectKey, a.EnvironmentKey, a.Key())}, nil
}
