package approvalapi

import (
	"context"
	"net/http"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/segment"
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
	Resource     *resourceRep       `json:"resource,omitempty"`
	Project      *reps.Project      `json:"project,omitempty"`
	Environments []reps.Environment `json:"environments,omitempty"`
}

// resourceRep is ExpandedResourceRep: the flag or segment a request acts
// on, under its kind.
type resourceRep struct {
	Kind    string      `json:"kind"`
	Flag    *reps.Flag  `json:"flag,omitempty"`
	Segment *segmentRep `json:"segment,omitempty"`
}

// segmentRep is the reference's UserSegment as an expanded resource: the
// segment as stored, with its links.
type segmentRep struct {
	*segment.Segment
	Links api.Links `json:"_links"`
}

type approvalsRep struct {
	Links      api.Links     `json:"_links"`
	TotalCount int64         `json:"totalCount"`
	Items      []approvalRep `json:"items"`
}

// approvalView renders requests, caching the flags, projects and
// environments they name across one answer.
type approvalView struct {
	h      handlers
	r      *http.Request
	expand map[string]bool
	flags  map[string]*flag.Flag
	dets   map[string]*flag.Detail
}

// expansions are the expand options, in the order an answer fills them.
var expansions = []string{"flag", "resource", "project", "environments"}

func (h handlers) view(r *http.Request, allowed ...string) (*approvalView, error) {
	exp, err := api.Expand(r.URL.Query(), allowed...)
	if err != nil {
		return nil, err
	}
	return &approvalView{h: h, r: r, expand: exp, flags: map[string]*flag.Flag{}, dets: map[string]*flag.Detail{}}, nil
}

func (v *approvalView) detail(ctx context.Context, a *approval.Request) (*flag.Detail, error) {
	k := a.ProjectKey + "/" + a.FlagKey
	if d, ok := v.dets[k]; ok {
		return d, nil
	}
	d, err := v.h.flags.Get(ctx, a.ProjectKey, a.FlagKey)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return nil, err
	}
	v.dets[k] = d
	return d, nil
}

func (v *approvalView) rep(a *approval.Request) (approvalRep, error) {
	ctx := v.r.Context()
	conflicts, err := v.h.approvals.Conflicts(ctx, a, v.flags)
	if err != nil {
		return approvalRep{}, err
	}
	links := api.Links{"self": api.JSONLink(approval.Href(a.ID)), "parent": api.JSONLink(approval.CollectionHref)}
	switch a.Kind() {
	case approval.KindAIConfig:
		links["aiConfig"] = api.JSONLink(aiconfig.Href(a.ProjectKey, a.AIConfigKey))
	case approval.KindSegment:
		links["segment"] = api.JSONLink(segment.Href(a.ProjectKey, a.EnvironmentKey, a.SegmentKey))
	default:
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
	for _, e := range expansions {
		if !v.expand[e] {
			continue
		}
		switch e {
		case "resource":
			if a.Kind() == approval.KindSegment {
				seg, err := v.h.segments.Get(ctx, a.ProjectKey, a.EnvironmentKey, a.SegmentKey)
				if err != nil && !fault.Is(err, fault.NotFound) {
					return approvalRep{}, err
				}
				if seg != nil {
					rep.Resource = &resourceRep{Kind: approval.KindSegment, Segment: &segmentRep{Segment: seg,
						Links: api.Links{"self": api.JSONLink(seg.Href()), "parent": api.JSONLink(segment.CollectionHref(a.ProjectKey, a.EnvironmentKey))}}}
				}
				continue
			}
			fallthrough
		case "flag":
			if a.Kind() != approval.KindFlag {
				continue // an AI Config or segment request has no flag to expand
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
					rep.Resource = &resourceRep{Kind: approval.KindFlag, Flag: &fr}
				}
			}
		case "project":
			p, err := v.h.projects.Get(ctx, a.ProjectKey)
			if err != nil && !fault.Is(err, fault.NotFound) {
				return approvalRep{}, err
			}
			if p != nil {
				pr := reps.NewProject(v.r, p)
				rep.Project = &pr
			}
		case "environments":
			env, err := v.h.envs.Get(ctx, a.ProjectKey, a.EnvironmentKey)
			if err != nil && !fault.Is(err, fault.NotFound) {
				return approvalRep{}, err
			}
			rep.Environments = []reps.Environment{}
			if env != nil {
				rep.Environments = append(rep.Environments, reps.NewEnvironment(v.r, env, v.h.envs.ApprovalsEnabled()))
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
