package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

type flagsRep struct {
	Links      api.Links   `json:"_links"`
	TotalCount int64       `json:"totalCount"`
	Items      []reps.Flag `json:"items"`
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
			view := reps.FlagView{Only: q["env"], Summary: summary}
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
			out := flagsRep{TotalCount: res.TotalCount, Items: make([]reps.Flag, 0, len(res.Items)), Links: links}
			for _, f := range res.Items {
				out.Items = append(out.Items, reps.NewFlag(r, f, res.Environments, view))
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
			api.WriteJSON(w, http.StatusCreated, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{}))
			return nil
		},
		"getFeatureFlag": func(w http.ResponseWriter, r *http.Request) error {
			d, err := flags.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("featureFlagKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{Only: r.URL.Query()["env"]}))
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
			api.WriteJSON(w, http.StatusOK, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{}))
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
