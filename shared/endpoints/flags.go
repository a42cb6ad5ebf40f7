package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// flagEnvRep is a flag's targeting in one environment as the API shows it.
// A summary (the list's default) leaves out the target, rule and
// prerequisite lists.
type flagEnvRep struct {
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
	// decided on proj/<p>:env/<e>:flag/<f>; a summary leaves it out.
	Access *policy.Access `json:"_access,omitempty"`
}

// flagRep is a flag as the API shows it.
type flagRep struct {
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
	Environments           map[string]flagEnvRep       `json:"environments"`
	Access                 policy.Access               `json:"_access"`
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

// flagView says which environments a representation shows (all when
// only is empty) and whether their lists are left out.
type flagView struct {
	only    []string
	summary bool
}

func newFlagRep(r *http.Request, f *flag.Flag, envs []*environment.Environment, v flagView) flagRep {
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	// The project's stored tags, loaded only for callers whose statements
	// select by tag (once per request).
	proj := api.StoredTags(r, policy.NewResource("proj", f.ProjectKey))
	rep := flagRep{
		Links: api.Links{"self": api.JSONLink(f.Href()), "parent": api.JSONLink(flag.CollectionHref(f.ProjectKey))},
		Key:   f.Key, Name: f.Name, Description: f.Description, Kind: f.Kind, Version: f.Version, CreationDate: f.CreationDate,
		IncludeInSnippet: f.ClientSideAvailability.UsingEnvironmentID, ClientSideAvailability: f.ClientSideAvailability,
		Variations: f.Variations, Defaults: f.Defaults, Tags: tags, Temporary: f.Temporary, Archived: f.Archived,
		MaintainerID: f.MaintainerID, CustomProperties: f.CustomProperties, Experiments: noExperiments, Environments: map[string]flagEnvRep{},
		Access: reps.Access(r, proj.Child("env", "*").Child("flag", f.Key, f.Tags...), flag.Actions),
	}
	for _, e := range envs {
		if len(v.only) > 0 && !slices.Contains(v.only, e.Key) {
			continue
		}
		if !api.MayView(r, policy.NewResource("proj", f.ProjectKey).Child("env", e.Key), identity.ViewAction) {
			continue // an environment the caller may not read shows nothing of its targeting
		}
		c := f.EnvView(e.Key)
		er := flagEnvRep{
			On: c.On, Archived: c.Archived, Salt: c.Salt, LastModified: c.LastModified, Version: c.Version,
			Fallthrough: c.Fallthrough, OffVariation: c.OffVariation, TrackEvents: c.TrackEvents, EnvironmentName: e.Name,
			TrackEventsFallthrough: c.TrackEventsFallthrough, Sel: f.Sel(e.Key),
			Site: api.Link{Href: "/" + f.ProjectKey + "/" + e.Key + "/features/" + f.Key, Type: "text/html"},
		}
		if !v.summary {
			er.Targets, er.ContextTargets, er.Rules, er.Prerequisites = c.Targets, c.ContextTargets, c.Rules, c.Prerequisites
			access := reps.Access(r, proj.Child("env", e.Key, e.Tags...).Child("flag", f.Key, f.Tags...), flag.EnvActions)
			er.Access = &access
		}
		rep.Environments[e.Key] = er
	}
	return rep
}

type flagsRep struct {
	Links      api.Links `json:"_links"`
	TotalCount int64     `json:"totalCount"`
	Items      []flagRep `json:"items"`
}

// maxFlagPage is the largest page of flags: each carries every environment.
const maxFlagPage = 100

func flagHandlers(s app.Services) map[string]api.Handler {
	flags := s.Flags
	return map[string]api.Handler{
		"getFeatureFlags": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, maxFlagPage)
			if err != nil {
				return err
			}
			summary, err := api.BoolParam(q, "summary", true)
			if err != nil {
				return err
			}
			pk := r.PathValue("projectKey")
			gen, sole := s.Audit.Generation()
			page := pageKey{gen: gen, project: pk, query: r.URL.RawQuery, rights: rightsIdentity(r)}
			cacheable := sole && summary && page.rights != nil
			if cacheable {
				if body, ok := pages.Get(page); ok {
					writeJSONBytes(w, body)
					return nil
				}
			}
			res, err := flags.List(r.Context(), pk, flag.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit})
			if err != nil {
				return err
			}
			view := flagView{only: q["env"], summary: summary}
			links := api.OffsetLinks(flag.CollectionHref(pk), q, offset, limit, res.TotalCount)
			if summary {
				body, err := flagSummaries(r, links, res.TotalCount, res.Items, res.Environments, view)
				if err != nil {
					return err
				}
				if cacheable {
					pages.Put(page, body)
				}
				writeJSONBytes(w, body)
				return nil
			}
			out := flagsRep{TotalCount: res.TotalCount, Items: make([]flagRep, 0, len(res.Items)), Links: links}
			for _, f := range res.Items {
				out.Items = append(out.Items, newFlagRep(r, f, res.Environments, view))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postFeatureFlag": func(w http.ResponseWriter, r *http.Request) error {
			var in flag.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			d, err := flags.Create(r.Context(), r.PathValue("projectKey"), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newFlagRep(r, d.Flag, d.Environments, flagView{}))
			return nil
		},
		"getFeatureFlag": func(w http.ResponseWriter, r *http.Request) error {
			d, err := flags.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("featureFlagKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newFlagRep(r, d.Flag, d.Environments, flagView{only: r.URL.Query()["env"]}))
			return nil
		},
		"patchFeatureFlag": func(w http.ResponseWriter, r *http.Request) error {
			// A dry run that went ahead would write; refuse it until previews exist.
			if dry, err := api.BoolParam(r.URL.Query(), "dryRun", false); err != nil || dry {
				return fault.New(fault.Invalid, "query parameter \"dryRun\" is not supported: the patch would be applied, not previewed")
			}
			body, err := api.ReadBody(w, r)
			if err != nil {
				return err
			}
			pk, fk := r.PathValue("projectKey"), r.PathValue("featureFlagKey")
			var d *flag.Detail
			if api.IsSemanticPatch(r) {
				sp, err := semanticpatch.Parse(body)
				if err != nil {
					return err
				}
				d, err = flags.SemanticPatch(r.Context(), pk, fk, sp)
				if err != nil {
					return err
				}
			} else {
				p, err := parseFlagJSONPatch(body)
				if err != nil {
					return err
				}
				if d, err = flags.Patch(r.Context(), pk, fk, p); err != nil {
					return err
				}
			}
			api.WriteJSON(w, http.StatusOK, newFlagRep(r, d.Flag, d.Environments, flagView{}))
			return nil
		},
		"deleteFeatureFlag": func(w http.ResponseWriter, r *http.Request) error {
			if err := flags.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("featureFlagKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}

// flagPatchNeeds reads what a flag update needs for the authorization
// check: each instruction's action in the environment it acts in for a
// semantic patch, each path's action in the environment it names for a
// JSON patch; changes to the flag's settings need their action on env/*.
func flagPatchNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	if api.IsSemanticPatch(r) {
		sp, err := semanticpatch.Parse(body)
		if err != nil {
			return nil, err
		}
		list, err := flag.InstructionEnvActions(sp.EnvironmentKey, sp.Instructions)
		if err != nil {
			return nil, err
		}
		return envNeeds(list), nil
	}
	p, err := parseFlagJSONPatch(body)
	if err != nil {
		return nil, err
	}
	list, err := flag.PatchEnvActions(p)
	if err != nil {
		return nil, err
	}
	return envNeeds(list), nil
}

// parseFlagJSONPatch parses a JSON patch, telling a client that sent
// semantic-patch instructions without the Content-Type parameter what to
// add, and reading LaunchDarkly's Terraform provider's misspelling of
// fallthrough as fallthrough (flag.WithProviderAliases).
func parseFlagJSONPatch(body []byte) (patch.Patch, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var probe struct {
			Instructions json.RawMessage `json:"instructions"`
		}
		if json.Unmarshal(trimmed, &probe) == nil && probe.Instructions != nil {
			return patch.Patch{}, fault.New(fault.Invalid, "the body holds semantic patch instructions, but Content-Type does not announce a semantic patch: send it as %q", "application/json; domain-model="+api.SemanticPatchModel)
		}
	}
	p, err := patch.Parse(body)
	if err != nil {
		return patch.Patch{}, err
	}
	return flag.WithProviderAliases(p), nil
}
