package segmentapi

import (
	"net/http"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/segment"
)

// segmentRep is a segment as the API shows it: the reference's
// UserSegment, timestamps as integers (Unix ms), every list [] rather than
// null. _flags appears on a single segment's read only.
type segmentRep struct {
	Links                api.Links         `json:"_links"`
	Key                  string            `json:"key"`
	Name                 string            `json:"name"`
	Description          string            `json:"description"`
	Tags                 []string          `json:"tags"`
	CreationDate         int64             `json:"creationDate"`
	LastModifiedDate     int64             `json:"lastModifiedDate"`
	Included             []string          `json:"included"`
	Excluded             []string          `json:"excluded"`
	IncludedContexts     []segment.Target  `json:"includedContexts"`
	ExcludedContexts     []segment.Target  `json:"excludedContexts"`
	Rules                []segment.Rule    `json:"rules"`
	Version              int               `json:"version"`
	Deleted              bool              `json:"deleted"`
	Unbounded            bool              `json:"unbounded"`
	UnboundedContextKind string            `json:"unboundedContextKind,omitempty"`
	Generation           int               `json:"generation"`
	UnboundedMetadata    *unboundedMetaRep `json:"_unboundedMetadata,omitempty"`
	Flags                *[]flagListingRep `json:"_flags,omitempty"`
	Access               policy.Access     `json:"_access"`
}

// unboundedMetaRep is a big segment's SegmentMetadata: which membership
// set it reads (segmentId is the SDKs' reference "<key>.g<generation>").
// It leaves out includedCount and excludedCount, which the reference does
// not require: flagplane keeps no count, and counting a million members
// on every read would read them all.
type unboundedMetaRep struct {
	EnvID        string `json:"envId"`
	SegmentID    string `json:"segmentId"`
	Version      int    `json:"version"`
	LastModified int64  `json:"lastModified"`
	Deleted      bool   `json:"deleted"`
}

// flagListingRep names a flag that uses the segment (FlagListingRep).
type flagListingRep struct {
	Links api.Links `json:"_links"`
	Key   string    `json:"key"`
	Name  string    `json:"name"`
	Site  api.Link  `json:"_site"`
}

type segmentsRep struct {
	Links      api.Links    `json:"_links"`
	TotalCount int          `json:"totalCount"`
	Items      []segmentRep `json:"items"`
}

// segmentResource is the segment's resource for `_access`, with the stored
// tags of its project and environment for callers whose roles select by tag.
func segmentResource(r *http.Request, s *segment.Segment) policy.Resource {
	env := api.StoredTags(r, policy.NewResource("proj", s.ProjectKey).Child("env", s.EnvironmentKey))
	return env.Child("segment", s.Key, s.Tags...)
}

// site is the segment's page in the UI.
func site(s *segment.Segment) api.Link {
	return api.Link{Href: "/" + s.ProjectKey + "/" + s.EnvironmentKey + "/segments/" + s.Key, Type: "text/html"}
}

// newSegmentRep shows s; envID fills a big segment's metadata.
func (h handlers) newSegmentRep(r *http.Request, s *segment.Segment, envID string) (segmentRep, error) {
	rep := segmentRep{
		Links: api.Links{
			"self":   api.JSONLink(s.Href()),
			"parent": api.JSONLink(segment.CollectionHref(s.ProjectKey, s.EnvironmentKey)),
			"site":   site(s),
		},
		// Lists are never nil: the segment package normalizes every segment it returns.
		Key: s.Key, Name: s.Name, Description: s.Description, Tags: s.Tags,
		CreationDate: s.CreationDate, LastModifiedDate: s.LastModifiedDate,
		Included: s.Included, Excluded: s.Excluded,
		IncludedContexts: s.IncludedContexts, ExcludedContexts: s.ExcludedContexts, Rules: s.Rules,
		Version: s.Version, Deleted: s.Deleted, Unbounded: s.Unbounded, UnboundedContextKind: s.UnboundedContextKind,
		Generation: s.Generation,
		Access:     reps.Access(r, segmentResource(r, s), segment.Actions),
	}
	if s.Unbounded {
		rep.UnboundedMetadata = &unboundedMetaRep{EnvID: envID, SegmentID: segmentRef(s), Version: s.Version,
			LastModified: s.LastModifiedDate, Deleted: s.Deleted}
	}
	return rep, nil
}

// segmentRef names a big segment's membership set as the SDKs do.
func segmentRef(s *segment.Segment) string {
	return s.Key + ".g" + strconv.Itoa(s.Generation)
}

// withFlags adds _flags: the flags using s in its environment.
func withFlags(rep *segmentRep, s *segment.Segment, users []segment.FlagRef) {
	out := make([]flagListingRep, 0, len(users))
	for _, f := range users {
		out = append(out, flagListingRep{
			Links: api.Links{"self": api.JSONLink(flag.Href(s.ProjectKey, f.Key)), "parent": api.JSONLink(flag.CollectionHref(s.ProjectKey))},
			Key:   f.Key, Name: f.Name,
			Site: api.Link{Href: "/" + s.ProjectKey + "/" + s.EnvironmentKey + "/features/" + f.Key, Type: "text/html"},
		})
	}
	rep.Flags = &out
}
