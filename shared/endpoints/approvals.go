package endpoints

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// approvalReviewRep is one review as the API shows it.
type approvalReviewRep struct {
	ID             string               `json:"_id"`
	Kind           string               `json:"kind"`
	CreationDate   jsondoc.MillisString `json:"creationDate"`
	Comment        string               `json:"comment,omitempty"`
	MemberID       string               `json:"memberId,omitempty"`
	ServiceTokenID string               `json:"serviceTokenId,omitempty"`
}

// approvalRep is an approval request as the API shows it (spec 2.7).
// Dates are Unix ms as strings. A request made with a service token has
// no requestorId; requestorServiceTokenId names the token instead.
type approvalRep struct {
	Links                   api.Links                    `json:"_links"`
	ID                      string                       `json:"_id"`
	Version                 int64                        `json:"_version"`
	CreationDate            jsondoc.MillisString         `json:"creationDate"`
	ServiceKind             string                       `json:"serviceKind"`
	RequestorID             string                       `json:"requestorId,omitempty"`
	RequestorServiceTokenID string                       `json:"requestorServiceTokenId,omitempty"`
	Description             string                       `json:"description"`
	ReviewStatus            string                       `json:"reviewStatus"`
	AllReviews              []approvalReviewRep          `json:"allReviews"`
	NotifyMemberIDs         []string                     `json:"notifyMemberIds"`
	NotifyTeamKeys          []string                     `json:"notifyTeamKeys"`
	AppliedDate             jsondoc.MillisString         `json:"appliedDate,omitempty"`
	AppliedByMemberID       string                       `json:"appliedByMemberId,omitempty"`
	AppliedByServiceTokenID string                       `json:"appliedByServiceTokenId,omitempty"`
	Status                  string                       `json:"status"`
	FailureReason           string                       `json:"failureReason,omitempty"`
	Instructions            []semanticpatch.Instruction  `json:"instructions"`
	Conflicts               []approval.Conflict          `json:"conflicts"`
	ExecutionDate           jsondoc.MillisString         `json:"executionDate,omitempty"`
	OperatingOnID           string                       `json:"operatingOnId"`
	ResourceID              string                       `json:"resourceId"`
	Source                  any                          `json:"source"`
	ApprovalSettings        environment.ApprovalSettings `json:"approvalSettings"`
	IntegrationConfig       any                          `json:"integrationConfig,omitempty"`

	Flag         *reps.Flag         `json:"flag,omitempty"`
	Resource     *reps.Flag         `json:"resource,omitempty"`
	Project      *reps.Project      `json:"project,omitempty"`
	Environments []reps.Environment `json:"environments,omitempty"`
}

type approvalsRep struct {
	Links      api.Links     `json:"_links"`
	TotalCount int64         `json:"totalCount"`
	Items      []approvalRep `json:"items"`
}

// approvalView renders requests, caching the flags, projects and
// environments they name across one answer.
type approvalView struct {
	s      app.Services
	r      *http.Request
	expand []string
	flags  map[string]*flag.Flag
	dets   map[string]*flag.Detail
}

func newApprovalView(s app.Services, r *http.Request, allowed ...string) (*approvalView, error) {
	v := &approvalView{s: s, r: r, flags: map[string]*flag.Flag{}, dets: map[string]*flag.Detail{}}
	for _, e := range strings.Split(r.URL.Query().Get("expand"), ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if !slices.Contains(allowed, e) {
			return nil, fault.New(fault.Invalid, "expand %q is not supported; use %s", e, strings.Join(allowed, ", "))
		}
		v.expand = append(v.expand, e)
	}
	return v, nil
}

func (v *approvalView) detail(ctx context.Context, a *approval.Request) (*flag.Detail, error) {
	k := a.ProjectKey + "/" + a.FlagKey
	if d, ok := v.dets[k]; ok {
		return d, nil
	}
	d, err := v.s.Flags.Get(ctx, a.ProjectKey, a.FlagKey)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return nil, err
	}
	v.dets[k] = d
	return d, nil
}

func (v *approvalView) rep(a *approval.Request) (approvalRep, error) {
	ctx := v.r.Context()
	conflicts, err := v.s.Approvals.Conflicts(ctx, a, v.flags)
	if err != nil {
		return approvalRep{}, err
	}
	links := api.Links{"self": api.JSONLink(approval.Href(a.ID)), "parent": api.JSONLink(approval.CollectionHref)}
	if a.Kind() == approval.KindAIConfig {
		links["aiConfig"] = api.JSONLink(aiconfig.Href(a.ProjectKey, a.AIConfigKey))
	} else {
		links["flag"] = api.JSONLink(flag.Href(a.ProjectKey, a.FlagKey))
	}
	rep := approvalRep{
		Links: links,
		ID:    a.ID, Version: a.Version, CreationDate: jsondoc.MillisString(a.CreationDate), ServiceKind: a.ServiceKind,
		RequestorID: a.RequestorID, RequestorServiceTokenID: a.RequestorServiceTokenID, Description: a.Description,
		ReviewStatus: a.ReviewStatus, AllReviews: []approvalReviewRep{}, NotifyMemberIDs: a.NotifyMemberIDs, NotifyTeamKeys: a.NotifyTeamKeys,
		AppliedDate: jsondoc.MillisString(a.AppliedDate), AppliedByMemberID: a.AppliedByMemberID, AppliedByServiceTokenID: a.AppliedByServiceTokenID,
		Status: a.Status, FailureReason: a.FailureReason, Instructions: a.Instructions, Conflicts: conflicts,
		ExecutionDate: jsondoc.MillisString(a.ExecutionDate), OperatingOnID: a.OperatingOnID, ResourceID: a.ResourceID,
		ApprovalSettings: a.ApprovalSettings,
	}
	if len(a.IntegrationConfig) > 0 {
		rep.IntegrationConfig = a.IntegrationConfig
	}
	for _, rv := range a.AllReviews {
		rep.AllReviews = append(rep.AllReviews, approvalReviewRep{ID: rv.ID, Kind: rv.Kind, CreationDate: jsondoc.MillisString(rv.CreationDate),
			Comment: rv.Comment, MemberID: rv.MemberID, ServiceTokenID: rv.ServiceTokenID})
	}
	for _, e := range v.expand {
		switch e {
		case "flag", "resource":
			if a.Kind() != approval.KindFlag {
				continue // an AI Config request has no flag to expand
			}
			d, err := v.detail(ctx, a)
			if err != nil {
				return approvalRep{}, err
			}
			if d != nil {
				fr := reps.NewFlag(v.r, d.Flag, d.Environments, reps.FlagView{Only: []string{a.EnvironmentKey}})
				if e == "flag" {
					rep.Flag = &fr
				} else {
					rep.Resource = &fr
				}
			}
		case "project":
			p, err := v.s.Projects.Get(ctx, a.ProjectKey)
			if err != nil && !fault.Is(err, fault.NotFound) {
				return approvalRep{}, err
			}
			if p != nil {
				pr := reps.NewProject(v.r, p)
				rep.Project = &pr
			}
		case "environments":
			env, err := v.s.Environments.Get(ctx, a.ProjectKey, a.EnvironmentKey)
			if err != nil && !fault.Is(err, fault.NotFound) {
				return approvalRep{}, err
			}
			rep.Environments = []reps.Environment{}
			if env != nil {
				rep.Environments = append(rep.Environments, reps.NewEnvironment(v.r, env, v.s.Environments.ApprovalsEnabled()))
			}
		}
	}
	return rep, nil
}

func (v *approvalView) write(w http.ResponseWriter, status int, a *approval.Request) error {
	rep, err := v.rep(a)
	if err != nil {
		return err
	}
	api.WriteJSON(w, status, rep)
	return nil
}

// maxApprovalPage is the reference's largest page of approval requests.
const maxApprovalPage = 200

func approvalHandlers(s app.Services) map[string]api.Handler {
	approvals := s.Approvals
	one := func(status int, do func(r *http.Request) (*approval.Request, error)) api.Handler {
		return func(w http.ResponseWriter, r *http.Request) error {
			a, err := do(r)
			if err != nil {
				return err
			}
			v, err := newApprovalView(s, r, "environments", "flag", "project", "resource")
			if err != nil {
				return err
			}
			return v.write(w, status, a)
		}
	}
	return map[string]api.Handler{
		"getApprovalRequests": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, maxApprovalPage)
			if err != nil {
				return err
			}
			v, err := newApprovalView(s, r, "flag", "project", "environments")
			if err != nil {
				return err
			}
			all, err := approvals.List(r.Context(), q.Get("filter"))
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
		},
		"postApprovalRequest": func(w http.ResponseWriter, r *http.Request) error {
			var in approval.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			a, err := approvals.Create(r.Context(), in)
			if err != nil {
				return err
			}
			v, _ := newApprovalView(s, r)
			return v.write(w, http.StatusCreated, a)
		},
		"getApprovalRequest": one(http.StatusOK, func(r *http.Request) (*approval.Request, error) {
			return approvals.Get(r.Context(), r.PathValue("id"))
		}),
		"deleteApprovalRequest": func(w http.ResponseWriter, r *http.Request) error {
			if err := approvals.Delete(r.Context(), r.PathValue("id")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		// The reference's body is a semantic patch (addReviewers,
		// updateDescription), declared as plain application/json: the
		// domain-model parameter may be given or left out.
		"patchApprovalRequest": func(w http.ResponseWriter, r *http.Request) error {
			body, err := api.ReadBody(w, r)
			if err != nil {
				return err
			}
			sp, err := semanticpatch.Parse(body)
			if err != nil {
				return err
			}
			a, err := approvals.Patch(r.Context(), r.PathValue("id"), sp)
			if err != nil {
				return err
			}
			v, _ := newApprovalView(s, r)
			return v.write(w, http.StatusOK, a)
		},
		"postApprovalRequestReview": func(w http.ResponseWriter, r *http.Request) error {
			var in approval.ReviewInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			a, err := approvals.Review(r.Context(), r.PathValue("id"), in)
			if err != nil {
				return err
			}
			v, _ := newApprovalView(s, r)
			return v.write(w, http.StatusOK, a)
		},
		"postApprovalRequestApply": func(w http.ResponseWriter, r *http.Request) error {
			var in approval.ApplyInput
			if r.ContentLength != 0 {
				if err := api.Decode(w, r, &in); err != nil {
					return err
				}
			}
			a, err := approvals.Apply(r.Context(), r.PathValue("id"), in)
			if err != nil {
				return err
			}
			v, _ := newApprovalView(s, r)
			return v.write(w, http.StatusOK, a)
		},
	}
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
// proj/<p>:env/<e>:aiconfig/<key>.
func approvalResource(kind, projectKey, envKey, key string) policy.Resource {
	kindOf := "flag"
	if kind == approval.KindAIConfig {
		kindOf = "aiconfig"
	}
	return policy.NewResource("proj", projectKey).Child("env", envKey).Child(kindOf, key)
}

// storedApprovalNeeds authorizes reading, reviewing, applying or deleting
// a request on the flag and environment the stored request acts on, so a
// role limited to staging reviews staging's requests only, and one denied
// a project reads none of its requests. A request that does
// not exist needs the right on proj/*:env/*:flag/*: a caller without it
// learns nothing (403), one with it gets the handler's 404.
func storedApprovalNeeds(s app.Services) api.Needs {
	return func(r *http.Request, _ []byte) ([]api.Need, error) {
		a, err := s.Approvals.Get(r.Context(), r.PathValue("id"))
		if fault.Is(err, fault.NotFound) {
			return []api.Need{{}}, nil
		}
		if err != nil {
			return nil, err
		}
		return []api.Need{approvalNeed(a.Kind(), a.ProjectKey, a.EnvironmentKey, a.Key())}, nil
	}
}
