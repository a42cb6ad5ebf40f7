// Package flagapi serves the flags group: a project's feature flags, read,
// created, patched (JSON patch or semantic patch) and deleted, and the
// expiring targets of flags and of users.
package flagapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// New is the flags group over a.
func New(a *app.App) app.Group {
	h := handlers{flags: a.Services.Flags, expiring: a.Services.Expiring, audit: a.Services.Audit, lists: newListCache()}
	ok := func(rep any) api.Answer { return api.Answer{Status: http.StatusOK, Rep: rep} }
	return app.Group{
		Name:     "flags",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getFeatureFlags":           h.getFeatureFlags,
			"postFeatureFlag":           h.postFeatureFlag,
			"getFeatureFlag":            h.getFeatureFlag,
			"patchFeatureFlag":          h.patchFeatureFlag,
			"deleteFeatureFlag":         h.deleteFeatureFlag,
			"getExpiringFlagsForUser":   h.getExpiringFlagsForUser,
			"getExpiringUserTargets":    h.getExpiringUserTargets,
			"patchExpiringFlagsForUser": h.patchExpiringFlagsForUser,
			"patchExpiringUserTargets":  h.patchExpiringUserTargets,
		},
		Needs: map[string]api.Needs{
			"patchFeatureFlag":          flagPatchNeeds,
			"patchExpiringFlagsForUser": expiringForUserNeeds,
		},
		Answers: map[string]api.Answer{
			"getFeatureFlags":           ok(flagsRep{}),
			"postFeatureFlag":           {Status: http.StatusCreated, Rep: reps.Flag{}},
			"getFeatureFlag":            ok(reps.Flag{}),
			"patchFeatureFlag":          ok(reps.Flag{}),
			"deleteFeatureFlag":         {Status: http.StatusNoContent},
			"getExpiringFlagsForUser":   ok(expiringListRep{}),
			"getExpiringUserTargets":    ok(expiringListRep{}),
			"patchExpiringFlagsForUser": ok(expiringPatchRep{}),
			"patchExpiringUserTargets":  ok(expiringPatchRep{}),
		},
	}
}

// handlers are the flags group's operations.
type handlers struct {
	flags    *flag.Service
	expiring *expiring.Service
	// audit tells whether this process is its table's only writer, and
	// how many commits it made: the list cache's key.
	audit *audit.Log
	lists *listCache
}

type flagsRep struct {
	Links      api.Links   `json:"_links"`
	TotalCount int64       `json:"totalCount"`
	Items      []reps.Flag `json:"items"`
}

// maxFlagPage is the largest page of flags: each carries every environment.
const maxFlagPage = 100

// listExpansions are the names the list's expand parameter takes: access
// adds each flag's `_access` objects; LaunchDarkly's other three are
// accepted, for its clients, and add nothing (flagplane keeps no
// evaluation or migration data on a flag, and code references are read
// from the code-refs group).
var listExpansions = []string{"access", "codeReferences", "evaluation", "migrationSettings"}

func (h handlers) getFeatureFlags(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, maxFlagPage)
	if err != nil {
		return err
	}
	summary, err := api.BoolParam(q, "summary", true)
	if err != nil {
		return err
	}
	expand, err := api.Expand(q, listExpansions...)
	if err != nil {
		return err
	}
	pk := r.PathValue("projectKey")
	gen, sole := h.audit.Generation()
	page := pageKey{gen: gen, project: pk, query: r.URL.RawQuery, rights: rightsIdentity(r)}
	cacheable := sole && summary && page.rights != nil
	if cacheable {
		if body, ok := h.lists.pages.Get(page); ok {
			writeJSONBytes(w, body)
			return nil
		}
	}
	// As LaunchDarkly's list since API version 20240415: environments only
	// when asked for by env (a request naming an older version sees all).
	// Without them the list reads only the flags (flag.ListQuery).
	view := reps.FlagView{Only: q["env"], Summary: summary, NoAccess: !expand["access"],
		NoEnvironments: len(q["env"]) == 0 && !namesVersionBefore(r, environmentsByDefaultUntil)}
	res, err := h.flags.List(r.Context(), pk, flag.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
		NoEnvironments: view.NoEnvironments})
	if err != nil {
		return err
	}
	links := api.OffsetLinks(flag.CollectionHref(pk), q, offset, limit, res.TotalCount)
	if summary {
		body, err := h.lists.summaries(r, links, res.TotalCount, res.Items, res.Environments, view)
		if err != nil {
			return err
		}
		if cacheable {
			h.lists.pages.Put(page, body)
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
}

func (h handlers) postFeatureFlag(w http.ResponseWriter, r *http.Request) error {
	var in flag.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	d, err := h.flags.Create(r.Context(), r.PathValue("projectKey"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{}))
	return nil
}

// flagExpansions are the names GET one flag's expand parameter takes:
// access adds the flag's `_access` objects (the settings' and each
// environment's, most of the answer's size, so only when asked, as in the
// list); LaunchDarkly's evaluation and migrationSettings are accepted and
// add nothing.
var flagExpansions = []string{"access", "evaluation", "migrationSettings"}

func (h handlers) getFeatureFlag(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	expand, err := api.Expand(q, flagExpansions...)
	if err != nil {
		return err
	}
	d, err := h.flags.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("featureFlagKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{Only: q["env"], NoAccess: !expand["access"]}))
	return nil
}

// environmentsByDefaultUntil is the API version from which LaunchDarkly's
// flag list leaves environments out unless env names them.
const environmentsByDefaultUntil = 20240415

// namesVersionBefore reports whether the request's LD-API-Version names a
// dated version before v (20220603, say), whose clients expect the list's
// environments by default.
func namesVersionBefore(r *http.Request, v int) bool {
	for _, h := range r.Header.Values(api.LDVersionHeader) {
		for _, part := range strings.Split(h, ",") {
			part = strings.TrimSpace(part)
			if n, err := strconv.Atoi(part); err == nil && len(part) == 8 && n < v {
				return true
			}
		}
	}
	return false
}

func (h handlers) patchFeatureFlag(w http.ResponseWriter, r *http.Request) error {
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
		d, err = h.flags.SemanticPatch(r.Context(), pk, fk, sp)
		if err != nil {
			return err
		}
	} else {
		p, err := parseFlagJSONPatch(body)
		if err != nil {
			return err
		}
		if d, err = h.flags.Patch(r.Context(), pk, fk, p); err != nil {
			return err
		}
	}
	api.WriteJSON(w, http.StatusOK, reps.NewFlag(r, d.Flag, d.Environments, reps.FlagView{}))
	return nil
}

func (h handlers) deleteFeatureFlag(w http.ResponseWriter, r *http.Request) error {
	if err := h.flags.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("featureFlagKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
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
		return envNeeds(r, list), nil
	}
	p, err := parseFlagJSONPatch(body)
	if err != nil {
		return nil, err
	}
	list, err := flag.PatchEnvActions(p)
	if err != nil {
		return nil, err
	}
	return envNeeds(r, list), nil
}

// envNeeds are needs of flag actions, each in the environment it acts in.
func envNeeds(r *http.Request, list []flag.EnvAction) []api.Need {
	out := make([]api.Need, len(list))
	for i, ea := range list {
		res := api.OperationResource(r).WithKey("env", ea.Env)
		out[i] = api.Need{Action: ea.Action, On: &res}
	}
	return out
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
