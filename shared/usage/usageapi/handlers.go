package usageapi

import (
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/usage"
)

// hourlyUpTo is the longest range the auto-granularity series (events,
// evaluations, streams) answer by the hour; longer ones are daily.
// LaunchDarkly answers by the minute within two hours: flagplane keeps
// no minute counters, so those ranges are hourly too.
const hourlyUpTo = 48 * time.Hour

func handlers(a *app.App, s *usage.Service) map[string]api.Handler {
	h := map[string]api.Handler{
		"getEventsUsage":             eventsHandler(s),
		"getEvaluationsUsage":        evaluationsHandler(a, s),
		"getStreamUsage":             streamsHandler(s, false),
		"getStreamUsageBySdkVersion": streamsHandler(s, true),
		"getStreamUsageSdkversion":   streamVersionsHandler(s),
		"getMauSdksByType":           mauSDKsHandler(s),
		"getSdkAllVersions":          sdkVersionsHandler(a, s, false),
		"getSdkVersionsDetails":      sdkVersionsHandler(a, s, true),
	}
	for id, op := range seriesOps {
		h[id] = seriesHandler(a, s, op)
	}
	return h
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

// eventsHandler: received are the SDK events flagplane took in; published
// are the events its data export destinations sent on.
func eventsHandler(s *usage.Service) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		now := s.Now()
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
		series, err := s.Reader.Compute(r.Context(), req)
		if err != nil {
			return err
		}
		if kind == "published" && len(series.Metadata) == 0 {
			api.WriteJSON(w, http.StatusOK, notCollectedRep(r, notExported))
			return nil
		}
		api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
		return nil
	}
}

func evaluationsHandler(a *app.App, s *usage.Service) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		now := s.Now()
		project, env, flagKey := r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("featureFlagKey")
		from, to, unit, err := autoRange(r, now, now.Add(-30*24*time.Hour))
		if err != nil {
			return err
		}
		loc, err := tzParam(r)
		if err != nil {
			return err
		}
		if _, err := a.Services.Environments.Get(r.Context(), project, env); err != nil {
			return err
		}
		if _, err := a.Services.Flags.Get(r.Context(), project, flagKey); err != nil {
			return err
		}
		series, err := s.Reader.Evaluations(r.Context(), project, env, flagKey, from, to, unit, loc)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
		return nil
	}
}

func checkSource(r *http.Request) error {
	if src := r.PathValue("source"); src != "client" && src != "server" {
		return fault.New(fault.Invalid, "source %q is not client or server", src)
	}
	return nil
}

// streamsHandler: the streaming connections server-side SDKs opened to
// the local server (in AWS SDKs poll, so none), by the hour within two
// days, by the day beyond; bySDK groups them by SDK name and version.
// Browser and mobile SDKs poll flagplane, so the client source is not collected.
func streamsHandler(s *usage.Service, bySDK bool) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkSource(r); err != nil {
			return err
		}
		now := s.Now()
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
		series, err := s.Reader.Compute(r.Context(), req)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, seriesRep{Links: selfOf(r), Metadata: series.Metadata, Series: series.Points})
		return nil
	}
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

// streamVersionsHandler lists the SDK names and versions that opened
// streams in the last 30 days (none from the client source: see above).
func streamVersionsHandler(s *usage.Service) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkSource(r); err != nil {
			return err
		}
		out := []map[string]string{}
		if r.PathValue("source") == "server" {
			now := s.Now()
			series, err := s.Reader.Compute(r.Context(), usage.Request{Metric: usage.Streams, From: now.Add(-30 * 24 * time.Hour), To: now,
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

func mauSDKsHandler(s *usage.Service) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		now := s.Now()
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
		names, err := s.Reader.SDKNames(r.Context(), side, from, to)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, sdkListRep{Links: selfOf(r), SDKs: names})
		return nil
	}
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

func sdkVersionsHandler(a *app.App, s *usage.Service, highest bool) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		now := s.Now()
		q := r.URL.Query()
		ctx := r.Context()
		f := usage.SDKFilter{EnvID: q.Get("environmentId"), Name: q.Get("sdkName"), Type: q.Get("sdkType"),
			AppID: q.Get("sdkAppId"), ConnectionType: q.Get("connectionType")}
		list, err := usage.SnapshotSDKsSeen(ctx, a.Table, f)
		if err != nil {
			return err
		}
		project := projectsByKey(ctx, a)
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
				if e, err := a.Services.Environments.Get(ctx, sdk.ProjectKey, sdk.EnvKey); err == nil {
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
}
