package usageapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/usage"
)

// Aggregation types and the granularities each allows, per family of series.
var (
	contextAggs = map[string][]string{usage.MonthToDate: {usage.Daily, usage.Monthly}, usage.Incremental: {usage.Daily}, usage.Rolling30d: {usage.Daily}}
	countAggs   = map[string][]string{usage.MonthToDate: {usage.Daily, usage.Hourly, usage.Monthly}, usage.Incremental: {usage.Daily, usage.Hourly}}
	metricsAggs = map[string][]string{usage.MonthToDate: {usage.Hourly, usage.Daily, usage.Monthly}, "average": {usage.Hourly, usage.Daily, usage.Monthly}}
	// legacyMAUAggs are the old MAU series' types; daily_incremental is incremental.
	legacyMAUAggs = map[string][]string{usage.Rolling30d: {usage.Daily}, usage.MonthToDate: {usage.Daily}, "daily_incremental": {usage.Daily}}
)

// Filters a series takes, by query parameter name.
const (
	fProject = "projectKey"
	fEnv     = "environmentKey"
	fKind    = "contextKind"
	fSDKName = "sdkName"
	fSDKType = "sdkType"
	fSDKVer  = "sdkVersion"
	fAppID   = "sdkAppId"
	fAnon    = "anonymous"
)

// MaxFilterValues bounds the values of one repeated filter: each project
// filtered on costs a Query per month read.
const MaxFilterValues = 50

// seriesOp describes one series operation.
type seriesOp struct {
	metric usage.Metric
	side   string
	aggs   map[string][]string
	defAgg string
	// filters maps the operation's query parameters to the filters above.
	filters map[string]string
	// groupParam is the group-by parameter's name; groupBy maps its values to dimensions.
	groupParam string
	groupBy    map[string]string
	// fixedGroup is always grouped by (mau/bycategory).
	fixedGroup []string
	// seconds: from and to are Unix seconds, as the reference says for these operations.
	seconds bool
	// defaultFrom is the start when from is absent (beginning of the month unless set).
	defaultFrom func(now time.Time) time.Time
	// notCollected names the source flagplane does not collect: the answer is
	// an empty series and one metadata entry saying so.
	notCollected string
}

func set(names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[n] = n
	}
	return m
}

var (
	contextFilters = set(fProject, fEnv, fKind, fSDKName, fAnon)
	mauFilters     = set(fProject, fEnv, fSDKName, fAnon)
	clientGroups   = set(usage.DimProjectID, usage.DimEnvID, usage.DimSDKName, usage.DimSDKAppID, usage.DimAnonymous, usage.DimContextKind)
	totalGroups    = set(usage.DimProjectID, usage.DimEnvID, usage.DimSDKName, usage.DimSDKType, usage.DimSDKAppID, usage.DimAnonymous, usage.DimContextKind)
)

func with(m map[string]string, extra ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for _, e := range extra {
		out[e] = e
	}
	return out
}

func daysAgo(n int) func(time.Time) time.Time {
	return func(now time.Time) time.Time { return now.Add(-time.Duration(n) * 24 * time.Hour) }
}

// Reasons of the series flagplane does not collect.
const (
	notObservability = "observability (sessions, errors, logs, traces, metrics): flagplane has no observability SDK ingestion"
	notVega          = "Vega AI: flagplane has no Vega AI assistant"
	notExperiments   = "experimentation: flagplane runs no experiments"
	notConnections   = "service connections: flagplane does not count SDK connections"
	notClientStreams = "client-side streaming: browser and mobile SDKs poll flagplane, which serves them no stream"
)

var seriesOps = map[string]seriesOp{
	"getContextsClientsideUsage": {metric: usage.Contexts, side: "client", aggs: contextAggs, defAgg: usage.MonthToDate, filters: contextFilters, groupParam: "groupBy", groupBy: clientGroups},
	"getContextsServersideUsage": {metric: usage.Contexts, side: "server", aggs: contextAggs, defAgg: usage.MonthToDate, filters: contextFilters, groupParam: "groupBy", groupBy: clientGroups},
	"getContextsTotalUsage":      {metric: usage.Contexts, aggs: contextAggs, defAgg: usage.MonthToDate, filters: with(contextFilters, fSDKType), groupParam: "groupBy", groupBy: totalGroups},
	"getMAUClientsideUsage":      {metric: usage.MAU, side: "client", aggs: contextAggs, defAgg: usage.MonthToDate, filters: mauFilters, groupParam: "groupBy", groupBy: clientGroups},
	"getMAUTotalUsage":           {metric: usage.MAU, aggs: contextAggs, defAgg: usage.MonthToDate, filters: with(mauFilters, fSDKType), groupParam: "groupBy", groupBy: totalGroups},
	"getMauUsage": {metric: usage.MAU, aggs: legacyMAUAggs, defAgg: usage.Rolling30d, defaultFrom: daysAgo(30),
		filters:    map[string]string{"project": fProject, "environment": fEnv, "sdktype": fSDKType, "sdk": fSDKName, "anonymous": fAnon, "contextKind": fKind},
		groupParam: "groupby", groupBy: map[string]string{"project": usage.DimProjectID, "environment": usage.DimEnvID, "sdktype": usage.DimSide,
			"sdk": usage.DimSDKName, "anonymous": usage.DimAnonymous, "contextKind": usage.DimContextKind, "sdkAppId": usage.DimSDKAppID}},
	"getMauUsageByCategory": {metric: usage.MAU, aggs: legacyMAUAggs, defAgg: usage.Rolling30d, defaultFrom: daysAgo(30), fixedGroup: []string{usage.DimCategory}},
	"getAIRunsUsage": {metric: usage.AIRuns, aggs: countAggs, defAgg: usage.MonthToDate, filters: set(fProject, fEnv, fSDKName, fSDKVer, fSDKType),
		groupParam: "groupBy", groupBy: set(usage.DimProjectID, usage.DimEnvID, usage.DimSDKName, usage.DimSDKVersion, usage.DimSDKType)},
	"getDataExportEventsUsage": {metric: usage.Exported, aggs: countAggs, defAgg: usage.MonthToDate, filters: set(fProject, fEnv),
		groupParam: "groupBy", groupBy: set(usage.DimEnvID)},
	"getExperimentationEventsUsage": {aggs: countAggs, defAgg: usage.MonthToDate, notCollected: notExperiments},
	"getExperimentationKeysUsage":   {aggs: countAggs, defAgg: usage.MonthToDate, notCollected: notExperiments},
	// Every destination is a warehouse destination: both count the export counters.
	"getWarehouseExportUsage": {metric: usage.Exported, aggs: countAggs, defAgg: usage.MonthToDate, filters: set(fProject, fEnv),
		groupParam: "groupBy", groupBy: set(usage.DimEnvID)},
	"getServiceConnectionsUsage":    {aggs: countAggs, defAgg: usage.MonthToDate, notCollected: notConnections},
	"getVegaAIUsage":                {aggs: contextAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notVega},
	"getObservabilityErrorsUsage":   {aggs: contextAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notObservability},
	"getObservabilityLogsUsage":     {aggs: contextAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notObservability},
	"getObservabilitySessionsUsage": {aggs: contextAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notObservability},
	"getObservabilityTracesUsage":   {aggs: contextAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notObservability},
	"getObservabilityMetricsUsage":  {aggs: metricsAggs, defAgg: usage.MonthToDate, seconds: true, notCollected: notObservability},
}

// seriesRep is the reference's SeriesListRep (spec 2.23).
type seriesRep struct {
	Links    api.Links          `json:"_links"`
	Metadata []map[string]any   `json:"metadata"`
	Series   []map[string]int64 `json:"series"`
}

func selfOf(r *http.Request) api.Links { return api.Self(r.URL.RequestURI()) }

// notCollectedRep is an empty series that says why.
func notCollectedRep(r *http.Request, reason string) seriesRep {
	return seriesRep{Links: selfOf(r), Metadata: []map[string]any{{"collected": false, "source": reason}}, Series: []map[string]int64{}}
}

// timeParam reads a Unix time (ms, or seconds) query parameter.
func timeParam(q url.Values, name string, seconds bool, def time.Time) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		unit := "milliseconds"
		if seconds {
			unit = "seconds"
		}
		return time.Time{}, fault.New(fault.Invalid, "query parameter %q must be a Unix time in %s, not %q", name, unit, v)
	}
	if seconds {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.UnixMilli(n).UTC(), nil
}

func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// request reads a series request from the query for op.
func (op seriesOp) request(q url.Values, now time.Time) (usage.Request, error) {
	defFrom := monthStart(now)
	if op.defaultFrom != nil {
		defFrom = op.defaultFrom(now)
	}
	from, err := timeParam(q, "from", op.seconds, defFrom)
	if err != nil {
		return usage.Request{}, err
	}
	to, err := timeParam(q, "to", op.seconds, now)
	if err != nil {
		return usage.Request{}, err
	}
	req := usage.Request{Metric: op.metric, Side: op.side, From: from, To: to,
		Aggregation: q.Get("aggregationType"), Granularity: q.Get("granularity")}
	if req.Aggregation == "" {
		req.Aggregation = op.defAgg
	}
	if req.Granularity == "" {
		req.Granularity = usage.Daily
	}
	for param, filter := range op.filters {
		vals := q[param]
		if len(vals) > MaxFilterValues {
			return usage.Request{}, fault.New(fault.Invalid, "%s is repeated %d times; at most %d values", param, len(vals), MaxFilterValues)
		}
		switch filter {
		case fProject:
			req.Projects = append(req.Projects, vals...)
		case fEnv:
			req.Envs = append(req.Envs, vals...)
		case fKind:
			req.Kinds = append(req.Kinds, vals...)
		case fSDKName:
			req.SDKNames = append(req.SDKNames, vals...)
		case fSDKType:
			req.SDKTypes = append(req.SDKTypes, vals...)
		case fSDKVer:
			req.SDKVersions = append(req.SDKVersions, vals...)
		case fAppID:
			req.AppIDs = append(req.AppIDs, vals...)
		case fAnon:
			req.Anonymous = append(req.Anonymous, vals...)
		}
	}
	if op.groupParam != "" {
		seen := map[string]bool{}
		for _, g := range q[op.groupParam] {
			if seen[g] {
				continue // grouping twice by one field is grouping once
			}
			seen[g] = true
			dim, ok := op.groupBy[g]
			if !ok {
				return usage.Request{}, fault.New(fault.Invalid, "%s %q is not one of %s", op.groupParam, g, strings.Join(keysOf(op.groupBy), ", "))
			}
			req.GroupBy = append(req.GroupBy, dim)
		}
	}
	req.GroupBy = append(req.GroupBy, op.fixedGroup...)
	if err := req.Check(op.aggs); err != nil {
		return usage.Request{}, err
	}
	if req.Aggregation == "daily_incremental" {
		req.Aggregation = usage.Incremental
	}
	return req, nil
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// projectRef is what a usage answer shows of a project.
type projectRef struct{ ID, Name string }

// projectsByKey resolves project keys to ids and names, reading each
// project once per request; a deleted project shows its key and no name.
func (h handlers) projectsByKey(ctx context.Context) func(string) projectRef {
	refs := map[string]projectRef{}
	return func(key string) projectRef {
		if ref, ok := refs[key]; ok {
			return ref
		}
		ref := projectRef{ID: key}
		if p, err := h.projects.Get(ctx, key); err == nil {
			ref = projectRef{ID: p.ID, Name: p.Name}
		}
		refs[key] = ref
		return ref
	}
}

// envIDs lists the ids of the environments the project and environment
// filters select (the export counters know environments by id).
func (h handlers) envIDs(ctx context.Context, projects, envs []string) ([]string, error) {
	if len(projects) == 0 {
		return nil, nil
	}
	ids := []string{}
	for _, p := range projects {
		if len(envs) > 0 {
			for _, e := range envs {
				env, err := h.envs.Get(ctx, p, e)
				if fault.Is(err, fault.NotFound) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("read environment %s/%s: %w", p, e, err)
				}
				ids = append(ids, env.ID)
			}
			continue
		}
		res, err := h.envs.List(ctx, p, environment.ListQuery{Limit: 1 << 20})
		if fault.Is(err, fault.NotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list environments of %s: %w", p, err)
		}
		for _, env := range res.Items {
			ids = append(ids, env.ID)
		}
	}
	return ids, nil
}

// seriesHandler serves one operation of seriesOps, whose answers differ
// only by their op.
type seriesHandler struct {
	h  handlers
	op seriesOp
}

func (sh seriesHandler) serve(w http.ResponseWriter, r *http.Request) error {
	return sh.h.series(w, r, sh.op)
}

// series answers the series op describes.
func (h handlers) series(w http.ResponseWriter, r *http.Request, op seriesOp) error {
	q := r.URL.Query()
	req, err := op.request(q, h.s.Now())
	if err != nil {
		return err
	}
	if op.notCollected != "" {
		api.WriteJSON(w, http.StatusOK, notCollectedRep(r, op.notCollected))
		return nil
	}
	if op.metric == usage.Exported {
		if len(q["eventKind"]) > 0 {
			return fault.New(fault.Invalid, "eventKind: the data export counters do not record event kinds")
		}
		if len(q["destination"]) > 0 {
			return fault.New(fault.Invalid, "destination: the data export counters count each environment's exported events, not each destination kind's")
		}
		if req.EnvIDs, err = h.envIDs(r.Context(), req.Projects, req.Envs); err != nil {
			return err
		}
	}
	project := h.projectsByKey(r.Context())
	req.ProjectID = func(key string) string { return project(key).ID }
	series, err := h.s.Reader.Compute(r.Context(), req)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
	return nil
}
