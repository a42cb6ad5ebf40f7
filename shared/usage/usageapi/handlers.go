package usageapi

import (
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/usage"
)

// hourlyUpTo is the longest range the auto-granularity series (events,
// evaluations, streams) answer by the hour; longer ones are daily.
// LaunchDarkly answers by the minute within two hours: flagplane keeps
// no minute counters, so those ranges are hourly too.
const hourlyUpTo = 48 * time.Hour

// handlers serve the group's operations on the usage service, with the
// table the SDK snapshots are read from and the projects, environments
// and flags the answers name.
type handlers struct {
	s        *usage.Service
	table    store.Table
	projects *project.Service
	envs     *environment.Service
	flags    *flag.Service
}

// answers are the group's success answers, for the OpenAPI document.
func answers() map[string]api.Answer {
	out := map[string]api.Answer{
		"getEventsUsage":             {Status: http.StatusOK, Rep: seriesRep{}},
		"getEvaluationsUsage":        {Status: http.StatusOK, Rep: seriesRep{}},
		"getStreamUsage":             {Status: http.StatusOK, Rep: seriesRep{}},
		"getStreamUsageBySdkVersion": {Status: http.StatusOK, Rep: seriesRep{}},
		"getStreamUsageSdkversion":   {Status: http.StatusOK, Rep: sdkVersionListRep{}},
		"getMauSdksByType":           {Status: http.StatusOK, Rep: sdkListRep{}},
		"getSdkAllVersions":          {Status: http.StatusOK, Rep: []sdkVersionRep{}},
		"getSdkVersionsDetails":      {Status: http.StatusOK, Rep: []sdkVersionRep{}},
	}
	for id := range seriesOps {
		out[id] = api.Answer{Status: http.StatusOK, Rep: seriesRep{}}
	}
	return out
}

// autoRange reads from and to for the series whose granularity follows
// the range (hourly within two days, daily beyond).
func autoRange(r *http.Request, now time.Time, defFrom time.Time) (time.Time, time.Time, time.Duration, error) {
	q := r.URL.Query()
	from, err := timeParam(q, "from", false, defFrom)
	if err != nil {
		return time.Time{}, time.Time{}, 0, err
	}
	to, err := timeParam(q, "to", false, now)
	if err != nil {
		return time.Time{}, time.Time{}, 0, err
	}
	switch {
	case to.Before(from):
		return time.Time{}, time.Time{}, 0, fault.New(fault.Invalid, "from must not be after to")
	case to.Sub(from) > usage.MaxRange:
		return time.Time{}, time.Time{}, 0, fault.New(fault.Invalid, "the time range from..to is longer than 365 days")
	case to.Sub(from) <= hourlyUpTo:
		return from, to, time.Hour, nil
	}
	return from, to, 24 * time.Hour, nil
}

func granularityOf(unit time.Duration) string {
	if unit == time.Hour {
		return usage.Hourly
	}
	return usage.Daily
}

// getEventsUsage: received are the SDK events flagplane took in;
// published are the events its data export destinations sent on.
func (h handlers) getEventsUsage(w http.ResponseWriter, r *http.Request) error {
	now := h.s.Now()
	kind := r.PathValue("type")
	if kind != "received" && kind != "published" {
		return fault.New(fault.Invalid, "type %q is not received or published", kind)
	}
	from, to, unit, err := autoRange(r, now, now.Add(-24*time.Hour))
	if err != nil {
		return err
	}
	req := usage.Request{Metric: usage.Events, From: from, To: to, Aggregation: usage.Incremental, Granularity: granularityOf(unit)}
	if kind == "published" {
		req.Metric = usage.Exported
	}
	series, err := h.s.Reader.Compute(r.Context(), req)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
	return nil
}

func (h handlers) getEvaluationsUsage(w http.ResponseWriter, r *http.Request) error {
	now := h.s.Now()
	project, env, flagKey := r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("featureFlagKey")
	from, to, unit, err := autoRange(r, now, now.Add(-30*24*time.Hour))
	if err != nil {
		return err
	}
	loc, err := tzParam(r)
	if err != nil {
		return err
	}
	if _, err := h.envs.Get(r.Context(), project, env); err != nil {
		return err
	}
	if _, err := h.flags.Get(r.Context(), project, flagKey); err != nil {
		return err
	}
	series, err := h.s.Reader.Evaluations(r.Context(), project, env, flagKey, from, to, unit, loc)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
	return nil
}

func checkSource(r *http.Request) error {
	if src := r.PathValue("source"); src != "client" && src != "server" {
		return fault.New(fault.Invalid, "source %q is not client or server", src)
	}
	return nil
}

func (h handlers) getStreamUsage(w http.ResponseWriter, r *http.Request) error {
	return h.streams(w, r, false)
}

func (h handlers) getStreamUsageBySdkVersion(w http.ResponseWriter, r *http.Request) error {
	return h.streams(w, r, true)
}

// streams are the streaming connections server-side SDKs opened to the
// local server (in AWS SDKs poll, so none), by the hour within two days,
// by the day beyond; bySDK groups them by SDK name and version. Browser
// and mobile SDKs poll flagplane, so the client source is not collected.
func (h handlers) streams(w http.ResponseWriter, r *http.Request, bySDK bool) error {
	if err := checkSource(r); err != nil {
		return err
	}
	now := h.s.Now()
	def := now.Add(-30 * 24 * time.Hour)
	if bySDK {
		def = now.Add(-24 * time.Hour)
	}
	from, to, unit, err := autoRange(r, now, def)
	if err != nil {
		return err
	}
	// tz is checked; the rolled-up days break at UTC midnight whatever it says.
	if _, err := tzParam(r); err != nil {
		return err
	}
	if r.PathValue("source") == "client" {
		api.WriteJSON(w, http.StatusOK, notCollectedRep(r, notClientStreams))
		return nil
	}
	req := usage.Request{Metric: usage.Streams, From: from, To: to, Aggregation: usage.Incremental, Granularity: granularityOf(unit)}
	if bySDK {
		q := r.URL.Query()
		req.GroupBy = []string{usage.DimSDKName, usage.DimSDKVersion}
		if v := q.Get("sdk"); v != "" {
			req.SDKNames = []string{v}
		}
		if v := q.Get("version"); v != "" {
			req.SDKVersions = []string{v}
		}
	}
	series, err := h.s.Reader.Compute(r.Context(), req)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
	return nil
}

// tzParam reads the tz parameter: an IANA time zone name, UTC by default.
func tzParam(r *http.Request) (*time.Location, error) {
	tz := r.URL.Query().Get("tz")
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fault.New(fault.Invalid, "tz %q is not a known time zone (an IANA name such as Europe/Paris)", tz)
	}
	return loc, nil
}

type sdkVersionListRep struct {
	Links       api.Links           `json:"_links"`
	SDKVersions []map[string]string `json:"sdkVersions"`
}

// getStreamUsageSdkversion lists the SDK names and versions that opened
// streams in the last 30 days (none from the client source: see streams).
func (h handlers) getStreamUsageSdkversion(w http.ResponseWriter, r *http.Request) error {
	if err := checkSource(r); err != nil {
		return err
	}
	out := []map[string]string{}
	if r.PathValue("source") == "server" {
		now := h.s.Now()
		series, err := h.s.Reader.Compute(r.Context(), usage.Request{Metric: usage.Streams, From: now.Add(-30 * 24 * time.Hour), To: now,
			Aggregation: usage.Incremental, Granularity: usage.Daily, GroupBy: []string{usage.DimSDKName, usage.DimSDKVersion}})
		if err != nil {
			return err
		}
		for _, md := range series.Metadata {
			out = append(out, map[string]string{"sdk": orUnknown(md[usage.DimSDKName]), "version": orUnknown(md[usage.DimSDKVersion])})
		}
	}
	api.WriteJSON(w, http.StatusOK, sdkVersionListRep{Links: selfOf(r), SDKVersions: out})
	return nil
}

// orUnknown is the reference's "Unknown" for an SDK that sent no name or version.
func orUnknown(v any) string {
	if s, _ := v.(string); s != "" {
		return s
	}
	return "Unknown"
}

type sdkListRep struct {
	Links api.Links `json:"_links"`
	SDKs  []string  `json:"sdks"`
}

func (h handlers) getMauSdksByType(w http.ResponseWriter, r *http.Request) error {
	now := h.s.Now()
	q := r.URL.Query()
	side := q.Get("sdktype")
	if side != "" && side != "client" && side != "server" {
		return fault.New(fault.Invalid, "sdktype %q is not client or server", side)
	}
	from, err := timeParam(q, "from", false, now.Add(-7*24*time.Hour))
	if err != nil {
		return err
	}
	to, err := timeParam(q, "to", false, now)
	if err != nil {
		return err
	}
	if to.Before(from) {
		return fault.New(fault.Invalid, "from must not be after to")
	}
	if to.Sub(from) > usage.MaxRange {
		return fault.New(fault.Invalid, "the time range from..to is longer than 365 days")
	}
	names, err := h.s.Reader.SDKNames(r.Context(), side, from, to)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, sdkListRep{Links: selfOf(r), SDKs: names})
	return nil
}

// sdkVersionRep is spec 2.17's SDK version usage item; the relay fields
// are left out: flagplane does not see Relay Proxy versions.
type sdkVersionRep struct {
	Name             string `json:"name"`
	Version          string `json:"version"`
	Type             string `json:"type"`
	ProjectID        string `json:"projectId"`
	ProjectKey       string `json:"projectKey"`
	ProjectName      string `json:"projectName"`
	EnvironmentID    string `json:"environmentId"`
	EnvironmentKey   string `json:"environmentKey"`
	EnvironmentName  string `json:"environmentName"`
	ApplicationID    string `json:"applicationId"`
	SvcLatestVersion string `json:"svcLatestVersion"`
	EOLStatus        string `json:"eolStatus"`
	LatestReleaseURL string `json:"latestReleaseUrl"`
	ConnectionType   string `json:"connectionType"`
}

func (h handlers) getSdkAllVersions(w http.ResponseWriter, r *http.Request) error {
	return h.sdkVersions(w, r, false)
}

func (h handlers) getSdkVersionsDetails(w http.ResponseWriter, r *http.Request) error {
	return h.sdkVersions(w, r, true)
}

// sdkVersions lists the SDKs seen, each environment's highest version
// only when highest.
func (h handlers) sdkVersions(w http.ResponseWriter, r *http.Request, highest bool) error {
	now := h.s.Now()
	q := r.URL.Query()
	ctx := r.Context()
	f := usage.SDKFilter{EnvID: q.Get("environmentId"), Name: q.Get("sdkName"), Type: q.Get("sdkType"),
		AppID: q.Get("sdkAppId"), ConnectionType: q.Get("connectionType")}
	list, err := usage.SnapshotSDKsSeen(ctx, h.table, h.s.Now(), f)
	if err != nil {
		return err
	}
	project := h.projectsByKey(ctx)
	if pid := q.Get("projectId"); pid != "" {
		kept := list[:0]
		for _, sdk := range list {
			if project(sdk.ProjectKey).ID == pid {
				kept = append(kept, sdk)
			}
		}
		list = kept
	}
	if highest {
		list = usage.HighestVersions(list)
	}
	envNames := map[string]string{}
	out := make([]sdkVersionRep, 0, len(list))
	for _, sdk := range list {
		proj := project(sdk.ProjectKey)
		ek := sdk.ProjectKey + "/" + sdk.EnvKey
		if _, ok := envNames[ek]; !ok {
			if e, err := h.envs.Get(ctx, sdk.ProjectKey, sdk.EnvKey); err == nil {
				envNames[ek] = e.Name
			}
		}
		rel, _ := usage.Versions.Release(sdk.Name)
		out = append(out, sdkVersionRep{Name: sdk.Name, Version: sdk.Version, Type: sdk.Type, ProjectID: proj.ID,
			ProjectKey: sdk.ProjectKey, ProjectName: proj.Name, EnvironmentID: sdk.EnvID,
			EnvironmentKey: sdk.EnvKey, EnvironmentName: envNames[ek], ApplicationID: sdk.ApplicationID,
			SvcLatestVersion: rel.LatestVersion, EOLStatus: usage.Versions.EOLStatus(sdk.Name, sdk.Version, now),
			LatestReleaseURL: rel.ReleaseURL, ConnectionType: sdk.ConnectionType})
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}
