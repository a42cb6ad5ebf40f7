// Package insightapi serves the insights group over HTTP: deployments,
// flag events, insight groups and their scores, and the repositories
// insights read code references from.
package insightapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/insight"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the insights group over a.
func New(a *app.App) app.Group {
	s := a.Services
	svc := insight.NewService(a.Table, s.Audit, s.Projects, s.Environments, s.Flags, s.Members, codeRefsOf(a), a.Now)
	h := handlers{s: svc, projects: s.Projects, envs: s.Environments, now: a.Now}
	return app.Group{
		Name: "insights",
		Handlers: map[string]api.Handler{
			"createDeploymentEvent":            h.createDeploymentEvent,
			"getDeployments":                   h.getDeployments,
			"getDeployment":                    h.getDeployment,
			"updateDeployment":                 h.updateDeployment,
			"getFlagEvents":                    h.getFlagEvents,
			"getInsightsScores":                h.getInsightsScores,
			"createInsightGroup":               h.createInsightGroup,
			"getInsightGroups":                 h.getInsightGroups,
			"getInsightGroup":                  h.getInsightGroup,
			"patchInsightGroup":                h.patchInsightGroup,
			"deleteInsightGroup":               h.deleteInsightGroup,
			"getInsightsRepositories":          h.getInsightsRepositories,
			"associateRepositoriesAndProjects": h.associateRepositoriesAndProjects,
			"deleteRepositoryProject":          h.deleteRepositoryProject,
		},
		// Every path of a deployment or insight group patch is the
		// operation's own action, so only the repository mappings need more.
		Needs:    map[string]api.Needs{"associateRepositoriesAndProjects": associateNeeds},
		Answers:  answers,
		Examples: examples(),
	}
}

// answers are the group's success answers, for the OpenAPI document.
var answers = map[string]api.Answer{
	"getInsightsScores":                {Status: http.StatusOK, Rep: insightScoresRep{}},
	"createInsightGroup":               {Status: http.StatusCreated, Rep: groupRep{}},
	"getInsightGroups":                 {Status: http.StatusOK, Rep: groupsRep{}},
	"getInsightGroup":                  {Status: http.StatusOK, Rep: groupRep{}},
	"patchInsightGroup":                {Status: http.StatusOK, Rep: groupRep{}},
	"deleteInsightGroup":               {Status: http.StatusNoContent},
	"getInsightsRepositories":          {Status: http.StatusOK, Rep: repositoriesRep{}},
	"associateRepositoriesAndProjects": {Status: http.StatusOK, Rep: mappingsRep{}},
	"deleteRepositoryProject":          {Status: http.StatusNoContent},
	"getFlagEvents":                    {Status: http.StatusOK, Rep: flagEventsRep{}},
	"getDeployments":                   {Status: http.StatusOK, Rep: deploymentsRep{}},
	"getDeployment":                    {Status: http.StatusOK, Rep: deploymentRep{}},
	"updateDeployment":                 {Status: http.StatusOK, Rep: deploymentRep{}},
	"createDeploymentEvent":            {Status: http.StatusCreated},
}

// associateNeeds: each mapping needs the right on its own project and
// repository. The router reads bodies for needs only of PATCHes and
// creates, so this PUT's body is peeked here.
func associateNeeds(r *http.Request, _ []byte) ([]api.Need, error) {
	body, err := api.PeekBody(r)
	if err != nil {
		return nil, err
	}
	var in mappingsInput
	if json.Unmarshal(body, &in) != nil {
		// Judged by the operation's own right; the handler's 400 follows.
		return []api.Need{{}}, nil
	}
	out := []api.Need{}
	for _, m := range in.Mappings {
		res := policy.NewResource("proj", m.ProjectKey).Child("insight-repository", m.RepositoryKey)
		out = append(out, api.Need{On: &res})
	}
	if len(out) == 0 {
		out = append(out, api.Need{})
	}
	return out, nil
}

type mappingsInput struct {
	Mappings []insight.Mapping `json:"mappings"`
}

// required returns a query parameter that must be present.
func required(q url.Values, name string) (string, error) {
	v := strings.TrimSpace(q.Get(name))
	if v == "" {
		return "", fault.New(fault.Invalid, "query parameter %q is required", name)
	}
	return v, nil
}

// keyList reads a comma-separated list of keys.
func keyList(q url.Values, name string) ([]string, error) {
	raw := strings.TrimSpace(q.Get(name))
	if raw == "" {
		return nil, nil
	}
	var out []string
	for _, k := range strings.Split(raw, ",") {
		k = strings.TrimSpace(k)
		if err := environment.ValidKey(name, k); err != nil {
			return nil, fault.New(fault.Invalid, "query parameter %q must be a comma-separated list of keys; %q is not one", name, k)
		}
		out = append(out, k)
	}
	return out, nil
}

// expands reads the expand parameter, refusing options the operation lacks.
func expands(q url.Values, allowed ...string) (map[string]bool, error) {
	out := map[string]bool{}
	raw := strings.TrimSpace(q.Get("expand"))
	if raw == "" {
		return out, nil
	}
	for _, e := range strings.Split(raw, ",") {
		e = strings.TrimSpace(e)
		ok := false
		for _, a := range allowed {
			ok = ok || a == e
		}
		if !ok {
			return nil, fault.New(fault.Invalid, "query parameter \"expand\": %q is not one of %s", e, strings.Join(allowed, ", "))
		}
		out[e] = true
	}
	return out, nil
}

// window reads from and to (Unix ms), defaulting to the last 7 days.
func window(q url.Values, now time.Time) (from, to int64, err error) {
	to, err = api.IntParam(q, "to", now.UnixMilli(), 0, 1<<53)
	if err != nil {
		return 0, 0, err
	}
	from, err = api.IntParam(q, "from", to-insight.DefaultFlagEventsWindow.Milliseconds(), 0, 1<<53)
	if err != nil {
		return 0, 0, err
	}
	if from > to {
		return 0, 0, fault.New(fault.Invalid, "query parameter \"from\" (%d) must not be after \"to\" (%d)", from, to)
	}
	return from, to, nil
}

// handlers serve the group's operations on the insights service, with
// the projects and environments their answers name.
type handlers struct {
	s        *insight.Service
	projects *project.Service
	envs     *environment.Service
	now      func() time.Time // the app's clock: the default end of a window
}

func (h handlers) createDeploymentEvent(w http.ResponseWriter, r *http.Request) error {
	var in insight.EventInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	if _, err := h.s.RecordEvent(r.Context(), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h handlers) getDeployments(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	dq, err := deploymentQuery(q, h.now())
	if err != nil {
		return err
	}
	if err := viewScope(r, dq.ProjectKey, dq.EnvironmentKey); err != nil {
		return err
	}
	if _, err := expands(q, "pullRequests", "flagReferences"); err != nil {
		return err
	}
	page, err := h.s.Deployments(r.Context(), dq)
	if err != nil {
		return err
	}
	out := deploymentsRep{TotalCount: page.TotalCount, Items: make([]deploymentRep, 0, len(page.Items))}
	for _, d := range page.Items {
		out.Items = append(out.Items, newDeploymentRep(d))
	}
	q.Del("after")
	q.Del("before")
	out.Links = cursorLinks(base+"/deployments", q, page.Next, page.Prev)
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getDeployment(w http.ResponseWriter, r *http.Request) error {
	if _, err := expands(r.URL.Query(), "pullRequests", "flagReferences"); err != nil {
		return err
	}
	d, err := h.s.Deployment(r.Context(), r.PathValue("deploymentID"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newDeploymentRep(d))
	return nil
}

func (h handlers) updateDeployment(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a deployment")
	if err != nil {
		return err
	}
	d, err := h.s.PatchDeployment(r.Context(), r.PathValue("deploymentID"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newDeploymentRep(d))
	return nil
}

func (h handlers) getFlagEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	fq, exp, err := flagEventQuery(q, h.now())
	if err != nil {
		return err
	}
	if err := viewScope(r, fq.ProjectKey, fq.EnvironmentKey); err != nil {
		return err
	}
	page, err := h.s.FlagEvents(r.Context(), fq)
	if err != nil {
		return err
	}
	out := flagEventsRep{TotalCount: page.TotalCount, Items: make([]flagEventRep, 0, len(page.Items))}
	for _, e := range page.Items {
		out.Items = append(out.Items, newFlagEventRep(e, exp))
	}
	q.Del("after")
	q.Del("before")
	out.Links = cursorLinks(base+"/flag-events", q, page.Next, page.Prev)
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getInsightsScores(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	sq, err := scoreQuery(q)
	if err != nil {
		return err
	}
	if err := viewScope(r, sq.ProjectKey, sq.EnvironmentKey); err != nil {
		return err
	}
	sc, err := h.s.Scores(r.Context(), sq)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, insightScoresRep{
		Period: stringPeriod(sc.Period), LastPeriod: stringPeriod(sc.LastPeriod),
		Scores: newScoresRep(sc), Links: api.Self(base + "/insights/scores?" + q.Encode()),
	})
	return nil
}

func (h handlers) createInsightGroup(w http.ResponseWriter, r *http.Request) error {
	var in insight.GroupInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := h.s.CreateGroup(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newGroupRep(g))
	return nil
}

func (h handlers) getInsightGroups(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, 20)
	if err != nil {
		return err
	}
	exp, err := expands(q, "scores", "environment", "metadata")
	if err != nil {
		return err
	}
	list, total, err := h.s.Groups(r.Context(), insight.GroupQuery{Query: q.Get("query"), Sort: q.Get("sort"), Offset: int(offset), Limit: int(limit)})
	if err != nil {
		return err
	}
	out := groupsRep{TotalCount: total, Items: make([]groupRep, 0, len(list)), Links: api.OffsetLinks(base+"/insights/groups", q, offset, limit, int64(total))}
	scores := newGroupScores(h.s)
	for _, g := range list {
		rep, err := h.expandGroup(r, scores, g, exp)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	if exp["scores"] || exp["metadata"] {
		cur, last := h.s.Periods()
		out.ScoreMetadata = &scoreMetadataRep{Period: stringPeriod(cur), LastPeriod: stringPeriod(last)}
	}
	if exp["metadata"] {
		md, err := h.countByIndicator(r, scores, q)
		if err != nil {
			return err
		}
		out.Metadata = md
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getInsightGroup(w http.ResponseWriter, r *http.Request) error {
	exp, err := expands(r.URL.Query(), "scores", "environment")
	if err != nil {
		return err
	}
	g, err := h.s.Group(r.Context(), r.PathValue("insightGroupKey"))
	if err != nil {
		return err
	}
	rep, err := h.expandGroup(r, newGroupScores(h.s), g, exp)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (h handlers) patchInsightGroup(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an insight group")
	if err != nil {
		return err
	}
	g, err := h.s.PatchGroup(r.Context(), r.PathValue("insightGroupKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newGroupRep(g))
	return nil
}

func (h handlers) deleteInsightGroup(w http.ResponseWriter, r *http.Request) error {
	if err := h.s.DeleteGroup(r.Context(), r.PathValue("insightGroupKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getInsightsRepositories(w http.ResponseWriter, r *http.Request) error {
	exp, err := expands(r.URL.Query(), "projects")
	if err != nil {
		return err
	}
	repos, err := h.s.Repositories(r.Context())
	if err != nil {
		return err
	}
	var mappings map[string][]string
	if exp["projects"] {
		if mappings, err = h.s.Mappings(r.Context()); err != nil {
			return err
		}
	}
	out := repositoriesRep{TotalCount: len(repos), Items: make([]repositoryRep, 0, len(repos)), Links: api.Self(base + "/repositories")}
	// A project mapped to several repositories is read once.
	summaries := map[string]*projectSummaryRep{}
	for _, rp := range repos {
		rep := repositoryRep{ID: rp.ID, Version: rp.Version, Key: rp.Key, Type: rp.Type, URL: rp.URL, MainBranch: rp.MainBranch}
		if exp["projects"] {
			ps := &projectSummariesRep{Items: []projectSummaryRep{}, Links: api.Links{}}
			for _, pk := range mappings[rp.Key] {
				if !api.MayView(r, policy.NewResource("proj", pk), identity.ViewAction) {
					continue // a project the caller may not read is not named
				}
				sum, seen := summaries[pk]
				if !seen {
					p, err := h.projects.Get(r.Context(), pk)
					if err != nil && !fault.Is(err, fault.NotFound) {
						return err
					}
					if err == nil {
						sum = &projectSummaryRep{ID: p.ID, Key: p.Key, Name: p.Name, Links: api.Self("/api/v2/projects/" + p.Key)}
					}
					summaries[pk] = sum
				}
				if sum != nil { // nil: the project was deleted since
					ps.Items = append(ps.Items, *sum)
				}
			}
			ps.TotalCount = len(ps.Items)
			rep.Projects = ps
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) associateRepositoriesAndProjects(w http.ResponseWriter, r *http.Request) error {
	var in mappingsInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	list, err := h.s.Associate(r.Context(), in.Mappings)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, mappingsRep{TotalCount: len(list), Items: list, Links: api.Self(base + "/repositories")})
	return nil
}

func (h handlers) deleteRepositoryProject(w http.ResponseWriter, r *http.Request) error {
	if err := h.s.DeleteMapping(r.Context(), r.PathValue("repositoryKey"), r.PathValue("projectKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// cursorLinks are a list's self and next links (next carries after), and
// prev (carrying before) when a newer page exists.
func cursorLinks(path string, q url.Values, next, prev string) api.Links {
	links := api.CursorLinks(path, q, "after", next)
	if prev != "" {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		v.Set("before", prev)
		links["prev"] = api.JSONLink(path + "?" + v.Encode())
	}
	return links
}

// viewScope refuses a read of the project and environment a query names,
// as the router refuses a read whose path names them.
func viewScope(r *http.Request, projectKey, envKey string) error {
	return api.RequireView(r, policy.NewResource("proj", projectKey).Child("env", envKey), identity.ViewAction)
}

func deploymentQuery(q url.Values, now time.Time) (insight.DeploymentQuery, error) {
	var dq insight.DeploymentQuery
	var err error
	if dq.ProjectKey, err = required(q, "projectKey"); err != nil {
		return dq, err
	}
	if dq.EnvironmentKey, err = required(q, "environmentKey"); err != nil {
		return dq, err
	}
	if dq.Applications, err = keyList(q, "applicationKey"); err != nil {
		return dq, err
	}
	limit, err := api.IntParam(q, "limit", 20, 1, 100)
	if err != nil {
		return dq, err
	}
	dq.Limit = int(limit)
	if dq.From, dq.To, err = window(q, now); err != nil {
		return dq, err
	}
	dq.After, dq.Before = q.Get("after"), q.Get("before")
	for name, v := range map[string]string{"after": dq.After, "before": dq.Before} {
		if v != "" && !insight.ValidDeploymentCursor(v) {
			return dq, fault.New(fault.Invalid, "query parameter %q %q is not a cursor this list gave", name, v)
		}
	}
	if dq.After != "" && dq.Before != "" {
		return dq, fault.New(fault.Invalid, "query parameters \"after\" and \"before\" cannot be used together")
	}
	dq.Kind = q.Get("kind")
	dq.Status = q.Get("status")
	switch dq.Status {
	case "", insight.StatusStarted, insight.StatusFinished, insight.StatusFailed:
	default:
		return dq, fault.New(fault.Invalid, "query parameter \"status\" must be started, finished or failed, not %q", dq.Status)
	}
	return dq, nil
}

func flagEventQuery(q url.Values, now time.Time) (insight.FlagEventQuery, bool, error) {
	var fq insight.FlagEventQuery
	var err error
	if fq.ProjectKey, err = required(q, "projectKey"); err != nil {
		return fq, false, err
	}
	if fq.EnvironmentKey, err = required(q, "environmentKey"); err != nil {
		return fq, false, err
	}
	if fq.Applications, err = keyList(q, "applicationKey"); err != nil {
		return fq, false, err
	}
	fq.FlagQuery = q.Get("query")
	switch fq.ImpactSize = q.Get("impactSize"); fq.ImpactSize {
	case "", insight.ImpactNone, insight.ImpactSmall, insight.ImpactMedium, insight.ImpactLarge:
	default:
		return fq, false, fault.New(fault.Invalid, "query parameter \"impactSize\" must be none, small, medium or large, not %q", fq.ImpactSize)
	}
	if q.Get("hasExperiments") != "" {
		v, err := api.BoolParam(q, "hasExperiments", false)
		if err != nil {
			return fq, false, err
		}
		fq.HasExperiments = &v
	}
	switch g := q.Get("global"); g {
	case "", "include":
	case "exclude":
		fq.ExcludeGlobal = true
	default:
		return fq, false, fault.New(fault.Invalid, "query parameter \"global\" must be include or exclude, not %q", g)
	}
	exp, err := expands(q, "experiments")
	if err != nil {
		return fq, false, err
	}
	limit, err := api.IntParam(q, "limit", insight.FlagEventsDefaultLimit, 1, insight.FlagEventsMaxLimit)
	if err != nil {
		return fq, false, err
	}
	fq.Limit = int(limit)
	if fq.From, fq.To, err = window(q, now); err != nil {
		return fq, false, err
	}
	fq.After, fq.Before = q.Get("after"), q.Get("before")
	for name, v := range map[string]string{"after": fq.After, "before": fq.Before} {
		if v != "" && !audit.ValidID(v) {
			return fq, false, fault.New(fault.Invalid, "query parameter %q %q is not a flag event id", name, v)
		}
	}
	if fq.After != "" && fq.Before != "" {
		return fq, false, fault.New(fault.Invalid, "query parameters \"after\" and \"before\" cannot be used together")
	}
	return fq, exp["experiments"], nil
}

func scoreQuery(q url.Values) (insight.ScoreQuery, error) {
	var sq insight.ScoreQuery
	var err error
	if sq.ProjectKey, err = required(q, "projectKey"); err != nil {
		return sq, err
	}
	if sq.EnvironmentKey, err = required(q, "environmentKey"); err != nil {
		return sq, err
	}
	sq.Applications, err = keyList(q, "applicationKey")
	return sq, err
}

// groupScores computes the scores of each (environment, applications) at
// most once per request: a list expanding scores and metadata asks for its
// page's groups twice, and groups alike share their scores.
type groupScores struct {
	s    *insight.Service
	seen map[string]scoresResult
}

type scoresResult struct {
	scores *insight.Scores
	err    error
}

func newGroupScores(s *insight.Service) *groupScores {
	return &groupScores{s: s, seen: map[string]scoresResult{}}
}

func (m *groupScores) of(ctx context.Context, g *insight.Group) (*insight.Scores, error) {
	// check keeps ApplicationKeys sorted and unique, so alike groups share a key.
	k := g.ProjectKey + "\x00" + g.EnvironmentKey + "\x00" + strings.Join(g.ApplicationKeys, ",")
	if r, ok := m.seen[k]; ok {
		return r.scores, r.err
	}
	sc, err := m.s.Scores(ctx, insight.ScoreQuery{ProjectKey: g.ProjectKey, EnvironmentKey: g.EnvironmentKey, Applications: g.ApplicationKeys})
	m.seen[k] = scoresResult{sc, err}
	return sc, err
}

// expandGroup builds a group's answer with the expansions asked for.
func (h handlers) expandGroup(r *http.Request, scores *groupScores, g *insight.Group, exp map[string]bool) (groupRep, error) {
	rep := newGroupRep(g)
	if exp["scores"] {
		sc, err := scores.of(r.Context(), g)
		if err != nil && !fault.Is(err, fault.NotFound) {
			return rep, err
		}
		if err == nil {
			rep.Scores = newScoresRep(sc)
			rep.ScoreMetadata = &scoreMetadataRep{Period: stringPeriod(sc.Period), LastPeriod: stringPeriod(sc.LastPeriod)}
		}
	}
	if exp["environment"] {
		env, err := h.envs.Get(r.Context(), g.ProjectKey, g.EnvironmentKey)
		if err != nil && !fault.Is(err, fault.NotFound) {
			return rep, err
		}
		if err == nil {
			rep.Environment = environmentRep(r, env, h.envs.ApprovalsEnabled())
		}
	}
	return rep, nil
}

// environmentRep is the group's environment as the environments group
// shows it, but with its SDK and mobile keys only for callers who may read
// the environment itself: reading an insight group must not hand out an
// environment's secrets.
func environmentRep(r *http.Request, e *environment.Environment, approvals bool) reps.Environment {
	rep := reps.NewEnvironment(r, e, approvals)
	if !api.MayView(r, policy.NewResource("proj", e.ProjectKey).Child("env", e.Key), identity.ViewAction) {
		rep.APIKey, rep.MobileKey = "", ""
	}
	return rep
}

// maxIndicatorGroups bounds the groups whose scores one metadata answer computes.
const maxIndicatorGroups = 100

// countByIndicator counts the groups the query matches by the indicator of
// their overall score. Scores are computed per group, so past
// maxIndicatorGroups groups the rest count as unknown.
func (h handlers) countByIndicator(r *http.Request, scores *groupScores, q url.Values) (*groupsMetadataRep, error) {
	all, total, err := h.s.Groups(r.Context(), insight.GroupQuery{Query: q.Get("query"), Limit: maxIndicatorGroups})
	if err != nil {
		return nil, err
	}
	var c countByIndicatorRep
	c.Total = total
	c.Unknown = total - len(all)
	for _, g := range all {
		sc, err := scores.of(r.Context(), g)
		if fault.Is(err, fault.NotFound) {
			c.Unknown++
			continue
		}
		if err != nil {
			return nil, err
		}
		switch sc.Metrics[insight.MetricOverall].IndicatorOf() {
		case insight.IndicatorExcellent:
			c.Excellent++
		case insight.IndicatorGood:
			c.Good++
		case insight.IndicatorFair:
			c.Fair++
		case insight.IndicatorNeedsAttention:
			c.NeedsAttention++
		default:
			c.NotCalculated++
		}
	}
	return &groupsMetadataRep{CountByIndicator: c}, nil
}
