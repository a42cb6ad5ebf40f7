// Package pipelineapi serves the release-pipelines group over HTTP (beta):
// a project's release pipelines, and flags' releases through them.
package pipelineapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the release-pipelines group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{pipes: s.Pipelines, projects: s.Projects, envs: s.Environments}
	return app.Group{
		Name:     "release-pipelines",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getAllReleasePipelines":                      h.getAllReleasePipelines,
			"postReleasePipeline":                         h.postReleasePipeline,
			"getReleasePipelineByKey":                     h.getReleasePipelineByKey,
			"putReleasePipeline":                          h.putReleasePipeline,
			"deleteReleasePipeline":                       h.deleteReleasePipeline,
			"getAllReleaseProgressionsForReleasePipeline": h.getAllReleaseProgressionsForReleasePipeline,
			"createReleaseForFlag":                        h.createReleaseForFlag,
			"getReleaseByFlagKey":                         h.getReleaseByFlagKey,
			"updatePhaseStatus":                           h.updatePhaseStatus,
			"patchReleaseByFlagKey":                       h.patchReleaseByFlagKey,
			"deleteReleaseByFlagKey":                      h.deleteReleaseByFlagKey,
		},
		Answers: map[string]api.Answer{
			"getAllReleasePipelines":                      {Status: http.StatusOK, Rep: pipelinesRep{}},
			"postReleasePipeline":                         {Status: http.StatusCreated, Rep: pipelineRep{}},
			"getReleasePipelineByKey":                     {Status: http.StatusOK, Rep: pipelineRep{}},
			"putReleasePipeline":                          {Status: http.StatusOK, Rep: pipelineRep{}},
			"deleteReleasePipeline":                       {Status: http.StatusNoContent},
			"getAllReleaseProgressionsForReleasePipeline": {Status: http.StatusOK, Rep: progressionsRep{}},
			"createReleaseForFlag":                        {Status: http.StatusOK, Rep: releaseRep{}},
			"getReleaseByFlagKey":                         {Status: http.StatusOK, Rep: releaseRep{}},
			"updatePhaseStatus":                           {Status: http.StatusOK, Rep: releaseRep{}},
			"patchReleaseByFlagKey":                       {Status: http.StatusOK, Rep: releaseRep{}},
			"deleteReleaseByFlagKey":                      {Status: http.StatusNoContent},
		},
	}
}

// envSummaryRep is an audience's environment (EnvironmentSummary).
type envSummaryRep struct {
	Links api.Links `json:"_links"`
	Key   string    `json:"key"`
	Name  string    `json:"name"`
	Color string    `json:"color"`
}

type audienceRep struct {
	ID            string          `json:"_id,omitempty"`
	Environment   envSummaryRep   `json:"environment"`
	Name          string          `json:"name"`
	SegmentKeys   []string        `json:"segmentKeys,omitempty"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

type phaseRep struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Audiences     []audienceRep   `json:"audiences"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

// pipelineRep is a release pipeline (spec 2.8); createdAt is a string of Unix ms.
type pipelineRep struct {
	Key              string        `json:"key"`
	Name             string        `json:"name"`
	Description      string        `json:"description"`
	CreatedAt        string        `json:"createdAt"`
	Phases           []phaseRep    `json:"phases"`
	Tags             []string      `json:"tags"`
	Version          int64         `json:"_version"`
	Access           policy.Access `json:"_access"`
	IsProjectDefault bool          `json:"isProjectDefault"`
	IsLegacy         bool          `json:"_isLegacy"`
}

// envSummaries renders the environments audiences name, reading each once per request.
type envSummaries struct {
	envs *environment.Service
	r    *http.Request
	seen map[string]envSummaryRep
}

func newEnvSummaries(envs *environment.Service, r *http.Request) *envSummaries {
	return &envSummaries{envs: envs, r: r, seen: map[string]envSummaryRep{}}
}

func (e *envSummaries) of(projectKey, envKey string) (envSummaryRep, error) {
	if rep, ok := e.seen[envKey]; ok {
		return rep, nil
	}
	rep := envSummaryRep{Links: api.Self(project.Href(projectKey) + "/environments/" + envKey), Key: envKey, Name: envKey}
	env, err := e.envs.Get(e.r.Context(), projectKey, envKey)
	switch {
	case err == nil:
		rep.Name, rep.Color = env.Name, env.Color
	case !fault.Is(err, fault.NotFound): // a deleted environment shows by its key
		return rep, err
	}
	e.seen[envKey] = rep
	return rep, nil
}

func (e *envSummaries) audience(projectKey, id string, a pipeline.Audience) (audienceRep, error) {
	env, err := e.of(projectKey, a.EnvironmentKey)
	return audienceRep{ID: id, Environment: env, Name: a.Name, SegmentKeys: a.SegmentKeys, Configuration: a.Configuration}, err
}

func newPipelineRep(r *http.Request, envs *envSummaries, p *pipeline.Pipeline, defaultKey string) (pipelineRep, error) {
	rep := pipelineRep{Key: p.Key, Name: p.Name, Description: p.Description, CreatedAt: strconv.FormatInt(p.CreatedAt, 10),
		Phases: []phaseRep{}, Tags: p.Tags, Version: p.Version, IsProjectDefault: p.Key == defaultKey, IsLegacy: p.IsLegacy,
		Access: reps.Access(r, policy.NewResource("proj", p.ProjectKey).Child("release-pipeline", p.Key), pipeline.Actions)}
	if rep.Tags == nil {
		rep.Tags = []string{}
	}
	for _, ph := range p.Phases {
		pr := phaseRep{ID: ph.ID, Name: ph.Name, Audiences: []audienceRep{}, Configuration: ph.Configuration}
		for _, a := range ph.Audiences {
			ar, err := envs.audience(p.ProjectKey, "", a)
			if err != nil {
				return rep, err
			}
			pr.Audiences = append(pr.Audiences, ar)
		}
		rep.Phases = append(rep.Phases, pr)
	}
	return rep, nil
}

type pipelinesRep struct {
	Links      api.Links     `json:"_links"`
	Items      []pipelineRep `json:"items"`
	TotalCount int64         `json:"totalCount"`
}

// releasePhaseRep is a phase of a flag's release (ReleasePhase).
type releasePhaseRep struct {
	ID             string          `json:"_id"`
	Name           string          `json:"_name"`
	Complete       bool            `json:"complete"`
	Started        bool            `json:"started"`
	Status         string          `json:"status"`
	CreationDate   int64           `json:"_creationDate"`
	StartedDate    int64           `json:"_startedDate,omitempty"`
	CompletionDate int64           `json:"_completionDate,omitempty"`
	Audiences      []audienceRep   `json:"_audiences"`
	Configuration  json.RawMessage `json:"configuration,omitempty"`
}

// releaseRep is a flag's release (Release).
type releaseRep struct {
	Links               api.Links         `json:"_links"`
	Name                string            `json:"name"`
	ReleasePipelineKey  string            `json:"releasePipelineKey"`
	ReleasePipelineDesc string            `json:"releasePipelineDescription"`
	Phases              []releasePhaseRep `json:"phases"`
	Version             int64             `json:"_version"`
	ReleaseVariationID  string            `json:"_releaseVariationId,omitempty"`
}

func newReleaseRep(envs *envSummaries, rel *pipeline.Release) (releaseRep, error) {
	rep := releaseRep{Links: api.Self(pipeline.ReleaseHref(rel.ProjectKey, rel.FlagKey)), Name: rel.Name,
		ReleasePipelineKey: rel.PipelineKey, ReleasePipelineDesc: rel.Description, Phases: []releasePhaseRep{},
		Version: rel.Version, ReleaseVariationID: rel.VariationID}
	for _, ph := range rel.Phases {
		// A phase starts when updatePhaseStatus makes it active: a new
		// release's first phase is neither started nor complete, as in LaunchDarkly.
		pr := releasePhaseRep{ID: ph.ID, Name: ph.Name, Complete: ph.Complete, Started: ph.Started || ph.Complete, Status: ph.Status(),
			CreationDate: ph.CreationDate, StartedDate: ph.StartedDate, CompletionDate: ph.CompletionDate, Audiences: []audienceRep{}, Configuration: ph.Configuration}
		for _, a := range ph.Audiences {
			ar, err := envs.audience(rel.ProjectKey, a.ID, a.Audience)
			if err != nil {
				return rep, err
			}
			pr.Audiences = append(pr.Audiences, ar)
		}
		rep.Phases = append(rep.Phases, pr)
	}
	return rep, nil
}

type progressionRep struct {
	Links         api.Links `json:"_links"`
	CreatedAt     int64     `json:"_createdAt"`
	CompletedAt   int64     `json:"_completedAt,omitempty"`
	FlagKey       string    `json:"flagKey"`
	ActivePhaseID string    `json:"activePhaseId,omitempty"`
}

type phaseInfoRep struct {
	ID           string `json:"_id"`
	Name         string `json:"name"`
	ReleaseCount int64  `json:"releaseCount"`
}

type progressionsRep struct {
	Links          api.Links        `json:"_links"`
	ActiveCount    int64            `json:"activeCount"`
	CompletedCount int64            `json:"completedCount"`
	Items          []progressionRep `json:"items"`
	Phases         []phaseInfoRep   `json:"phases"`
	TotalCount     int64            `json:"totalCount"`
}

// handlers serve the group's operations; projects name their default
// pipeline, and environments the audiences of phases.
type handlers struct {
	pipes    *pipeline.Service
	projects *project.Service
	envs     *environment.Service
}

// writePipeline writes p with status.
func (h handlers) writePipeline(w http.ResponseWriter, r *http.Request, status int, p *pipeline.Pipeline) error {
	proj, err := h.projects.Get(r.Context(), p.ProjectKey)
	if err != nil {
		return err
	}
	rep, err := newPipelineRep(r, newEnvSummaries(h.envs, r), p, proj.DefaultReleasePipelineKey)
	if err != nil {
		return err
	}
	api.WriteJSON(w, status, rep)
	return nil
}

// writeRelease writes a flag's release.
func (h handlers) writeRelease(w http.ResponseWriter, r *http.Request, rel *pipeline.Release) error {
	rep, err := newReleaseRep(newEnvSummaries(h.envs, r), rel)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (h handlers) getAllReleasePipelines(w http.ResponseWriter, r *http.Request) error {
	projectKey := r.PathValue("projectKey")
	f, err := listing.ParseFilter(r.URL.Query().Get("filter"), "query", "env")
	if err != nil {
		return err
	}
	offset, limit, err := api.OffsetParams(r.URL.Query(), 20, 100)
	if err != nil {
		return err
	}
	all, proj, err := h.pipes.List(r.Context(), projectKey, pipeline.ListQuery{Query: f["query"], Env: f["env"]})
	if err != nil {
		return err
	}
	path := project.Href(projectKey) + "/release-pipelines"
	out := pipelinesRep{Links: api.OffsetLinks(path, r.URL.Query(), offset, limit, int64(len(all))),
		Items: []pipelineRep{}, TotalCount: int64(len(all))}
	envs := newEnvSummaries(h.envs, r)
	for _, p := range listing.Window(all, offset, limit) {
		rep, err := newPipelineRep(r, envs, p, proj.DefaultReleasePipelineKey)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postReleasePipeline(w http.ResponseWriter, r *http.Request) error {
	var in pipeline.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, err := h.pipes.Create(r.Context(), r.PathValue("projectKey"), in)
	if err != nil {
		return err
	}
	return h.writePipeline(w, r, http.StatusCreated, p)
}

func (h handlers) getReleasePipelineByKey(w http.ResponseWriter, r *http.Request) error {
	p, err := h.pipes.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey"))
	if err != nil {
		return err
	}
	return h.writePipeline(w, r, http.StatusOK, p)
}

func (h handlers) putReleasePipeline(w http.ResponseWriter, r *http.Request) error {
	var in pipeline.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, err := h.pipes.Replace(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey"), in)
	if err != nil {
		return err
	}
	return h.writePipeline(w, r, http.StatusOK, p)
}

func (h handlers) deleteReleasePipeline(w http.ResponseWriter, r *http.Request) error {
	if err := h.pipes.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getAllReleaseProgressionsForReleasePipeline(w http.ResponseWriter, r *http.Request) error {
	projectKey, pipelineKey := r.PathValue("projectKey"), r.PathValue("pipelineKey")
	f, err := listing.ParseFilter(r.URL.Query().Get("filter"), "status", "activePhaseId")
	if err != nil {
		return err
	}
	offset, limit, err := api.OffsetParams(r.URL.Query(), 20, 100)
	if err != nil {
		return err
	}
	p, all, kept, err := h.pipes.Progressions(r.Context(), projectKey, pipelineKey, pipeline.ProgressionQuery{Status: f["status"], ActivePhase: f["activePhaseId"]})
	if err != nil {
		return err
	}
	path := pipeline.Href(projectKey, pipelineKey) + "/releases"
	out := progressionsRep{Links: api.OffsetLinks(path, r.URL.Query(), offset, limit, int64(len(kept))),
		Items: []progressionRep{}, Phases: []phaseInfoRep{}, TotalCount: int64(len(kept))}
	inPhase := map[string]int64{}
	for _, rel := range all {
		if a := rel.ActivePhase(); a != "" {
			out.ActiveCount++
			inPhase[a]++
		} else {
			out.CompletedCount++
		}
	}
	for _, ph := range p.Phases {
		out.Phases = append(out.Phases, phaseInfoRep{ID: ph.ID, Name: ph.Name, ReleaseCount: inPhase[ph.ID]})
	}
	for _, rel := range listing.Window(kept, offset, limit) {
		out.Items = append(out.Items, progressionRep{Links: api.Self(pipeline.ReleaseHref(projectKey, rel.FlagKey)),
			CreatedAt: rel.CreatedAt, CompletedAt: rel.CompletedAt(), FlagKey: rel.FlagKey, ActivePhaseID: rel.ActivePhase()})
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) createReleaseForFlag(w http.ResponseWriter, r *http.Request) error {
	var in pipeline.ReleaseInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	rel, err := h.pipes.CreateRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), in)
	if err != nil {
		return err
	}
	return h.writeRelease(w, r, rel)
}

func (h handlers) getReleaseByFlagKey(w http.ResponseWriter, r *http.Request) error {
	rel, err := h.pipes.Release(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"))
	if err != nil {
		return err
	}
	return h.writeRelease(w, r, rel)
}

func (h handlers) updatePhaseStatus(w http.ResponseWriter, r *http.Request) error {
	var in pipeline.PhaseStatusInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	rel, err := h.pipes.UpdatePhaseStatus(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), r.PathValue("phaseId"), in)
	if err != nil {
		return err
	}
	return h.writeRelease(w, r, rel)
}

func (h handlers) patchReleaseByFlagKey(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a flag's release")
	if err != nil {
		return err
	}
	rel, err := h.pipes.PatchRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), p)
	if err != nil {
		return err
	}
	return h.writeRelease(w, r, rel)
}

func (h handlers) deleteReleaseByFlagKey(w http.ResponseWriter, r *http.Request) error {
	if err := h.pipes.DeleteRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
