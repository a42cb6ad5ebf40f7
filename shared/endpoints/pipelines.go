package endpoints

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/reps"
)

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
	s    app.Services
	r    *http.Request
	seen map[string]envSummaryRep
}

func newEnvSummaries(s app.Services, r *http.Request) *envSummaries {
	return &envSummaries{s: s, r: r, seen: map[string]envSummaryRep{}}
}

func (e *envSummaries) of(projectKey, envKey string) (envSummaryRep, error) {
	if rep, ok := e.seen[envKey]; ok {
		return rep, nil
	}
	rep := envSummaryRep{Links: api.Self(project.Href(projectKey) + "/environments/" + envKey), Key: envKey, Name: envKey}
	env, err := e.s.Environments.Get(e.r.Context(), projectKey, envKey)
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

func pipelineHandlers(s app.Services) map[string]api.Handler {
	pipes := s.Pipelines
	one := func(w http.ResponseWriter, r *http.Request, status int, p *pipeline.Pipeline) error {
		proj, err := s.Projects.Get(r.Context(), p.ProjectKey)
		if err != nil {
			return err
		}
		rep, err := newPipelineRep(r, newEnvSummaries(s, r), p, proj.DefaultReleasePipelineKey)
		if err != nil {
			return err
		}
		api.WriteJSON(w, status, rep)
		return nil
	}
	release := func(w http.ResponseWriter, r *http.Request, rel *pipeline.Release) error {
		rep, err := newReleaseRep(newEnvSummaries(s, r), rel)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, rep)
		return nil
	}
	return map[string]api.Handler{
		"getAllReleasePipelines": func(w http.ResponseWriter, r *http.Request) error {
			projectKey := r.PathValue("projectKey")
			f, err := listing.ParseFilter(r.URL.Query().Get("filter"), "query", "env")
			if err != nil {
				return err
			}
			offset, limit, err := api.OffsetParams(r.URL.Query(), 20, 100)
			if err != nil {
				return err
			}
			all, proj, err := pipes.List(r.Context(), projectKey, pipeline.ListQuery{Query: f["query"], Env: f["env"]})
			if err != nil {
				return err
			}
			path := project.Href(projectKey) + "/release-pipelines"
			out := pipelinesRep{Links: api.OffsetLinks(path, r.URL.Query(), offset, limit, int64(len(all))),
				Items: []pipelineRep{}, TotalCount: int64(len(all))}
			envs := newEnvSummaries(s, r)
			for _, p := range listing.Window(all, offset, limit) {
				rep, err := newPipelineRep(r, envs, p, proj.DefaultReleasePipelineKey)
				if err != nil {
					return err
				}
				out.Items = append(out.Items, rep)
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postReleasePipeline": func(w http.ResponseWriter, r *http.Request) error {
			var in pipeline.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			p, err := pipes.Create(r.Context(), r.PathValue("projectKey"), in)
			if err != nil {
				return err
			}
			return one(w, r, http.StatusCreated, p)
		},
		"getReleasePipelineByKey": func(w http.ResponseWriter, r *http.Request) error {
			p, err := pipes.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey"))
			if err != nil {
				return err
			}
			return one(w, r, http.StatusOK, p)
		},
		"putReleasePipeline": func(w http.ResponseWriter, r *http.Request) error {
			var in pipeline.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			p, err := pipes.Replace(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey"), in)
			if err != nil {
				return err
			}
			return one(w, r, http.StatusOK, p)
		},
		"deleteReleasePipeline": func(w http.ResponseWriter, r *http.Request) error {
			if err := pipes.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("pipelineKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		"getAllReleaseProgressionsForReleasePipeline": func(w http.ResponseWriter, r *http.Request) error {
			projectKey, pipelineKey := r.PathValue("projectKey"), r.PathValue("pipelineKey")
			f, err := listing.ParseFilter(r.URL.Query().Get("filter"), "status", "activePhaseId")
			if err != nil {
				return err
			}
			offset, limit, err := api.OffsetParams(r.URL.Query(), 20, 100)
			if err != nil {
				return err
			}
			p, all, kept, err := pipes.Progressions(r.Context(), projectKey, pipelineKey, pipeline.ProgressionQuery{Status: f["status"], ActivePhase: f["activePhaseId"]})
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
		},
		"createReleaseForFlag": func(w http.ResponseWriter, r *http.Request) error {
			var in pipeline.ReleaseInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			rel, err := pipes.CreateRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), in)
			if err != nil {
				return err
			}
			return release(w, r, rel)
		},
		"getReleaseByFlagKey": func(w http.ResponseWriter, r *http.Request) error {
			rel, err := pipes.Release(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"))
			if err != nil {
				return err
			}
			return release(w, r, rel)
		},
		"updatePhaseStatus": func(w http.ResponseWriter, r *http.Request) error {
			var in pipeline.PhaseStatusInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			rel, err := pipes.UpdatePhaseStatus(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), r.PathValue("phaseId"), in)
			if err != nil {
				return err
			}
			return release(w, r, rel)
		},
		"patchReleaseByFlagKey": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "a flag's release")
			if err != nil {
				return err
			}
			rel, err := pipes.PatchRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey"), p)
			if err != nil {
				return err
			}
			return release(w, r, rel)
		},
		"deleteReleaseByFlagKey": func(w http.ResponseWriter, r *http.Request) error {
			if err := pipes.DeleteRelease(r.Context(), r.PathValue("projectKey"), r.PathValue("flagKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
