package reps

import (
	"net/http"
	"slices"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// FlagEnv is a flag's targeting in one environment as the API shows it.
// A summary (the list's default) leaves out the target, rule and
// prerequisite lists.
type FlagEnv struct {
	On             bool                 `json:"on"`
	Archived       bool                 `json:"archived"`
	Salt           string               `json:"salt"`
	LastModified   int64                `json:"lastModified"`
	Version        int                  `json:"version"`
	Targets        []flag.Target        `json:"targets,omitzero"`
	ContextTargets []flag.Target        `json:"contextTargets,omitzero"`
	Rules          []flag.Rule          `json:"rules,omitzero"`
	Fallthrough    flag.VariationOrRoll `json:"fallthrough"`
	OffVariation   *int                 `json:"offVariation"`
	Prerequisites  []flag.Prerequisite  `json:"prerequisites,omitzero"`
	TrackEvents    bool                 `json:"trackEvents"`
	// TrackEventsFallthrough and Sel are required by the reference's
	// FeatureFlagConfig; Sel is a hash of the targeting (see flag.Sel).
	TrackEventsFallthrough bool     `json:"trackEventsFallthrough"`
	Sel                    string   `json:"sel"`
	Site                   api.Link `json:"_site"`
	EnvironmentName        string   `json:"_environmentName"`
	// Access is the caller's rights on the flag in this environment,
	// decided on proj/<p>:env/<e>:flag/<f>; left out with FlagView.NoAccess.
	Access *policy.Access `json:"_access,omitempty"`
}

// Flag is a flag as the API shows it: in the flags group and in an
// approval request's flag.
type Flag struct {
	Links                  api.Links                   `json:"_links"`
	Key                    string                      `json:"key"`
	Name                   string                      `json:"name"`
	Description            string                      `json:"description"`
	Kind                   string                      `json:"kind"`
	Version                int                         `json:"_version"`
	CreationDate           int64                       `json:"creationDate"`
	IncludeInSnippet       bool                        `json:"includeInSnippet"`
	ClientSideAvailability flag.ClientSideAvailability `json:"clientSideAvailability"`
	Variations             []flag.Variation            `json:"variations"`
	Defaults               flag.Defaults               `json:"defaults"`
	Tags                   []string                    `json:"tags"`
	Temporary              bool                        `json:"temporary"`
	Archived               bool                        `json:"archived"`
	MaintainerID           string                      `json:"maintainerId,omitempty"`
	CustomProperties       flag.CustomProperties       `json:"customProperties"`
	Experiments            experimentsRep              `json:"experiments"`
	// Environments is nil, and left out, where FlagView.NoEnvironments.
	Environments map[string]FlagEnv `json:"environments,omitzero"`
	// Access is the caller's rights on the flag's settings, decided on
	// proj/<p>:env/*:flag/<f>; left out with FlagView.NoAccess.
	Access *policy.Access `json:"_access,omitempty"`
}

// experimentsRep is the reference's ExperimentInfoRep, which every flag
// carries: flagplane runs no experiments, so it lists none, with the
// baseline at the first variation.
type experimentsRep struct {
	BaselineIdx int        `json:"baselineIdx"`
	Items       []struct{} `json:"items"`
}

// noExperiments is the experiments of every flag.
var noExperiments = experimentsRep{Items: []struct{}{}}

// FlagView says which environments a representation shows (all when
// Only is empty, none with NoEnvironments: LaunchDarkly's list since API
// version 20240415 shows environments only when asked with env), whether
// their lists are left out (Summary), and whether every `_access` is
// (NoAccess: GET and list show them only when asked, with expand=access,
// since they are most of a flag's size).
type FlagView struct {
	Only           []string
	Summary        bool
	NoAccess       bool
	NoEnvironments bool
}

// NewFlag shows f, in the environments of envs that v and the caller's
// rights let it show.
func NewFlag(r *http.Request, f *flag.Flag, envs []*environment.Environment, v FlagView) Flag {
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	// The project's stored tags, loaded only for callers whose statements
	// select by tag (once per request).
	proj := api.StoredTags(r, policy.NewResource("proj", f.ProjectKey))
	rep := Flag{
		Links: api.Links{"self": api.JSONLink(f.Href()), "parent": api.JSONLink(flag.CollectionHref(f.ProjectKey))},
		Key:   f.Key, Name: f.Name, Description: f.Description, Kind: f.Kind, Version: f.Version, CreationDate: f.CreationDate,
		IncludeInSnippet: f.ClientSideAvailability.UsingEnvironmentID, ClientSideAvailability: f.ClientSideAvailability,
		Variations: f.Variations, Defaults: f.Defaults, Tags: tags, Temporary: f.Temporary, Archived: f.Archived,
		MaintainerID: f.MaintainerID, CustomProperties: f.CustomProperties, Experiments: noExperiments,
	}
	if !v.NoAccess {
		access := Access(r, proj.Child("env", "*").Child("flag", f.Key, f.Tags...), flag.Actions)
		rep.Access = &access
	}
	if v.NoEnvironments {
		return rep
	}
	rep.Environments = map[string]FlagEnv{}
	for _, e := range envs {
		if len(v.Only) > 0 && !slices.Contains(v.Only, e.Key) {
			continue
		}
		if !api.MayView(r, policy.NewResource("proj", f.ProjectKey).Child("env", e.Key), identity.ViewAction) {
			continue // an environment the caller may not read shows nothing of its targeting
		}
		c := f.EnvView(e.Key)
		er := FlagEnv{
			On: c.On, Archived: c.Archived, Salt: c.Salt, LastModified: c.LastModified, Version: c.Version,
			Fallthrough: c.Fallthrough, OffVariation: c.OffVariation, TrackEvents: c.TrackEvents, EnvironmentName: e.Name,
			TrackEventsFallthrough: c.TrackEventsFallthrough, Sel: f.Sel(e.Key),
			Site: api.Link{Href: "/" + f.ProjectKey + "/" + e.Key + "/features/" + f.Key, Type: "text/html"},
		}
		if !v.Summary {
			er.Targets, er.ContextTargets, er.Rules, er.Prerequisites = c.Targets, c.ContextTargets, c.Rules, c.Prerequisites
		}
		if !v.NoAccess {
			access := Access(r, proj.Child("env", e.Key, e.Tags...).Child("flag", f.Key, f.Tags...), flag.EnvActions)
			er.Access = &access
		}
		rep.Environments[e.Key] = er
	}
	return rep
}
