package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// The expiring targets of a segment: removals of contexts from its
// included or excluded targets scheduled at a date, in the context form
// (expiring-targets) and the user form (expiring-user-targets, user keys
// only).

// expiringResourceRep is ResourceId: the segment a removal acts on.
type expiringResourceRep struct {
	Kind           string `json:"kind"`
	ProjectKey     string `json:"projectKey"`
	EnvironmentKey string `json:"environmentKey"`
	Key            string `json:"key"`
}

// expiringTargetRep is ExpiringTarget.
type expiringTargetRep struct {
	ID             string              `json:"_id"`
	Version        int64               `json:"_version"`
	ExpirationDate int64               `json:"expirationDate"`
	ContextKind    string              `json:"contextKind"`
	ContextKey     string              `json:"contextKey"`
	TargetType     string              `json:"targetType"`
	ResourceID     expiringResourceRep `json:"_resourceId"`
}

// expiringUserTargetRep is ExpiringUserTargetItem.
type expiringUserTargetRep struct {
	ID             string              `json:"_id"`
	Version        int64               `json:"_version"`
	ExpirationDate int64               `json:"expirationDate"`
	UserKey        string              `json:"userKey"`
	TargetType     string              `json:"targetType"`
	ResourceID     expiringResourceRep `json:"_resourceId"`
}

// expiringTargetsRep is ExpiringTargetGetResponse.
type expiringTargetsRep struct {
	Items []expiringTargetRep `json:"items"`
	Links api.Links           `json:"_links"`
}

// expiringUserTargetsRep is ExpiringUserTargetGetResponse.
type expiringUserTargetsRep struct {
	Items []expiringUserTargetRep `json:"items"`
	Links api.Links               `json:"_links"`
}

// expiringPatchCounts are the instruction counts of a patch's answer. A
// patch applies every instruction or none, so a success has no failed
// instructions.
type expiringPatchCounts struct {
	TotalInstructions      int   `json:"totalInstructions"`
	SuccessfulInstructions int   `json:"successfulInstructions"`
	FailedInstructions     int   `json:"failedInstructions"`
	Errors                 []any `json:"errors"`
}

// expiringTargetsPatchRep is ExpiringTargetPatchResponse.
type expiringTargetsPatchRep struct {
	Items []expiringTargetRep `json:"items"`
	Links api.Links           `json:"_links"`
	expiringPatchCounts
}

// expiringUserTargetsPatchRep is ExpiringUserTargetPatchResponse.
type expiringUserTargetsPatchRep struct {
	Items []expiringUserTargetRep `json:"items"`
	Links api.Links               `json:"_links"`
	expiringPatchCounts
}

func resourceRep(t *expiring.SegmentTarget) expiringResourceRep {
	r := t.ResourceID
	return expiringResourceRep{Kind: r.Kind, ProjectKey: r.ProjectKey, EnvironmentKey: r.EnvironmentKey, Key: r.Key}
}

// contextTargets shows every removal in the context form.
func contextTargets(ts []*expiring.SegmentTarget) []expiringTargetRep {
	out := []expiringTargetRep{}
	for _, t := range ts {
		out = append(out, expiringTargetRep{ID: t.ID, Version: t.Version, ExpirationDate: t.ExpirationDate, ContextKind: t.ContextKind,
			ContextKey: t.ContextKey, TargetType: t.TargetType, ResourceID: resourceRep(t)})
	}
	return out
}

// userTargets shows the removals of user keys in the user form.
func userTargets(ts []*expiring.SegmentTarget) []expiringUserTargetRep {
	out := []expiringUserTargetRep{}
	for _, t := range ts {
		if t.ContextKind == segment.UserKind {
			out = append(out, expiringUserTargetRep{ID: t.ID, Version: t.Version, ExpirationDate: t.ExpirationDate, UserKey: t.ContextKey,
				TargetType: t.TargetType, ResourceID: resourceRep(t)})
		}
	}
	return out
}

func expiringHref(r *http.Request) string {
	return expiring.SegmentHref(r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey"))
}

func expiringUserHref(r *http.Request) string {
	return expiringUserPath(r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey"))
}

// expiringUserPath is the API path of a segment's expiring user targets.
func expiringUserPath(projectKey, envKey, segmentKey string) string {
	return "/api/v2/segments/" + projectKey + "/" + segmentKey + "/expiring-user-targets/" + envKey
}

func (h handlers) segmentTargets(r *http.Request) ([]*expiring.SegmentTarget, error) {
	return h.expiring.ForSegment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey"))
}

func (h handlers) getExpiringTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	ts, err := h.segmentTargets(r)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, expiringTargetsRep{Items: contextTargets(ts), Links: api.Links{"self": api.JSONLink(expiringHref(r))}})
	return nil
}

func (h handlers) getExpiringUserTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	ts, err := h.segmentTargets(r)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, expiringUserTargetsRep{Items: userTargets(ts), Links: api.Links{"self": api.JSONLink(expiringUserHref(r))}})
	return nil
}

func (h handlers) patchExpiringTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	ts, n, err := h.patchExpiring(w, r, false)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, expiringTargetsPatchRep{Items: contextTargets(ts), Links: api.Links{"self": api.JSONLink(expiringHref(r))},
		expiringPatchCounts: succeeded(n)})
	return nil
}

func (h handlers) patchExpiringUserTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	ts, n, err := h.patchExpiring(w, r, true)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, expiringUserTargetsPatchRep{Items: userTargets(ts), Links: api.Links{"self": api.JSONLink(expiringUserHref(r))},
		expiringPatchCounts: succeeded(n)})
	return nil
}

func succeeded(n int) expiringPatchCounts {
	return expiringPatchCounts{TotalInstructions: n, SuccessfulInstructions: n, Errors: []any{}}
}

// patchExpiring reads a patch of the form's instructions (users: the
// user form) and runs it, returning the segment's removals after and how
// many instructions ran. These operations take nothing but a semantic
// patch, so a body with "instructions" is one whatever its Content-Type
// says (LaunchDarkly's Go client sends plain application/json).
func (h handlers) patchExpiring(w http.ResponseWriter, r *http.Request, users bool) ([]*expiring.SegmentTarget, int, error) {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return nil, 0, err
	}
	if !api.IsSemanticPatch(r) && !semanticpatch.HasInstructions(body) {
		return nil, 0, fault.New(fault.Invalid, "expiring targets are changed by semantic patch only: send an object with \"instructions\" (Content-Type %q)", "application/json; domain-model="+api.SemanticPatchModel)
	}
	sp, err := semanticpatch.Parse(body)
	if err != nil {
		return nil, 0, err
	}
	ts, err := h.expiring.PatchSegment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey"), sp, users)
	return ts, len(sp.Instructions), err
}
