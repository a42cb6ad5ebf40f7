package insightapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/insight"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

const base = "/api/v2/engineering-insights"

// deploymentRep is the reference's DeploymentRep. flagplane records no
// pull requests or commits, so their counts are 0 and leadTime is the
// deployment's own duration (started to finished).
type deploymentRep struct {
	ID                   string         `json:"id"`
	ApplicationKey       string         `json:"applicationKey"`
	ApplicationVersion   string         `json:"applicationVersion"`
	StartedAt            int64          `json:"startedAt"`
	EndedAt              *int64         `json:"endedAt,omitempty"`
	DurationMs           *int64         `json:"durationMs,omitempty"`
	Status               string         `json:"status"`
	Kind                 string         `json:"kind"`
	Active               bool           `json:"active"`
	Metadata             map[string]any `json:"metadata"`
	Archived             bool           `json:"archived"`
	EnvironmentKey       string         `json:"environmentKey"`
	NumberOfContributors int            `json:"numberOfContributors"`
	NumberOfPullRequests int            `json:"numberOfPullRequests"`
	LinesAdded           int            `json:"linesAdded"`
	LinesDeleted         int            `json:"linesDeleted"`
	LeadTime             int64          `json:"leadTime"`
}

func newDeploymentRep(d *insight.Deployment) deploymentRep {
	r := deploymentRep{ID: d.ID, ApplicationKey: d.ApplicationKey, ApplicationVersion: d.Version, StartedAt: d.StartedAt,
		Status: d.Status, Kind: d.Kind, Active: d.Active, Metadata: d.Metadata, Archived: d.Archived,
		EnvironmentKey: d.EnvironmentKey, LeadTime: d.DurationMs()}
	if d.EndedAt != 0 {
		end, dur := d.EndedAt, d.DurationMs()
		r.EndedAt, r.DurationMs = &end, &dur
	}
	return r
}

type deploymentsRep struct {
	TotalCount int             `json:"totalCount"`
	Items      []deploymentRep `json:"items"`
	Links      api.Links       `json:"_links"`
}

// periodStringRep is a period as the spec's scoreMetadata has it (2.5:
// strings of Unix ms). The scores read uses it too: it is the same
// reference schema (InsightPeriod), so one type for both.
type periodStringRep struct {
	StartTime jsondoc.MillisString `json:"startTime"`
	EndTime   jsondoc.MillisString `json:"endTime"`
}

func stringPeriod(p insight.Period) periodStringRep {
	return periodStringRep{StartTime: jsondoc.MillisString(p.Start), EndTime: jsondoc.MillisString(p.End)}
}

type rangeRep struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type scoreRep struct {
	Score            int       `json:"score"`
	AggregateOf      []string  `json:"aggregateOf,omitempty"`
	DiffVsLastPeriod int       `json:"diffVsLastPeriod"`
	Indicator        string    `json:"indicator"`
	IndicatorRange   rangeRep  `json:"indicatorRange"`
	LastPeriod       *scoreRep `json:"lastPeriod,omitempty"`
}

func newScoreRep(s *insight.Score) *scoreRep {
	if s == nil {
		return nil
	}
	ind := s.IndicatorOf()
	rg := insight.IndicatorRanges[ind]
	return &scoreRep{Score: s.Score, AggregateOf: s.AggregateOf, DiffVsLastPeriod: s.Diff, Indicator: ind,
		IndicatorRange: rangeRep{Min: rg.Min, Max: rg.Max}, LastPeriod: newScoreRep(s.Last)}
}

// scoresRep holds every member score, by the reference's names.
type scoresRep struct {
	Overall                 *scoreRep `json:"overall"`
	DeploymentFrequency     *scoreRep `json:"deploymentFrequency"`
	DeploymentFailureRate   *scoreRep `json:"deploymentFailureRate"`
	LeadTime                *scoreRep `json:"leadTime"`
	ImpactSize              *scoreRep `json:"impactSize"`
	ExperimentationCoverage *scoreRep `json:"experimentationCoverage"`
	FlagHealth              *scoreRep `json:"flagHealth"`
	Velocity                *scoreRep `json:"velocity"`
	Risk                    *scoreRep `json:"risk"`
	Efficiency              *scoreRep `json:"efficiency"`
	CreationRatio           *scoreRep `json:"creationRatio"`
}

func newScoresRep(s *insight.Scores) *scoresRep {
	m := func(name string) *scoreRep { return newScoreRep(s.Metrics[name]) }
	return &scoresRep{
		Overall: m(insight.MetricOverall), DeploymentFrequency: m(insight.MetricDeploymentFrequency),
		DeploymentFailureRate: m(insight.MetricDeploymentFailureRate), LeadTime: m(insight.MetricLeadTime),
		ImpactSize: m(insight.MetricImpactSize), ExperimentationCoverage: m(insight.MetricExperimentationCoverage),
		FlagHealth: m(insight.MetricFlagHealth), Velocity: m(insight.MetricVelocity), Risk: m(insight.MetricRisk),
		Efficiency: m(insight.MetricEfficiency), CreationRatio: m(insight.MetricCreationRatio),
	}
}

type insightScoresRep struct {
	Period     periodStringRep `json:"period"`
	LastPeriod periodStringRep `json:"lastPeriod"`
	Scores     *scoresRep      `json:"scores"`
	Links      api.Links       `json:"_links"`
}

type scoreMetadataRep struct {
	Period     periodStringRep `json:"period"`
	LastPeriod periodStringRep `json:"lastPeriod"`
}

// groupRep is an insight group (spec 2.5: createdAt a string of Unix ms).
type groupRep struct {
	Key             string               `json:"key"`
	Name            string               `json:"name"`
	ProjectKey      string               `json:"projectKey"`
	EnvironmentKey  string               `json:"environmentKey"`
	ApplicationKeys []string             `json:"applicationKeys"`
	CreatedAt       jsondoc.MillisString `json:"createdAt"`
	Environment     any                  `json:"environment,omitempty"`
	Scores          *scoresRep           `json:"scores,omitempty"`
	ScoreMetadata   *scoreMetadataRep    `json:"scoreMetadata,omitempty"`
	Links           api.Links            `json:"_links"`
}

func newGroupRep(g *insight.Group) groupRep {
	return groupRep{Key: g.Key, Name: g.Name, ProjectKey: g.ProjectKey, EnvironmentKey: g.EnvironmentKey,
		ApplicationKeys: g.ApplicationKeys, CreatedAt: jsondoc.MillisString(g.CreatedAt),
		Links: api.Self(insight.GroupHref(g.Key))}
}

type countByIndicatorRep struct {
	Excellent      int `json:"excellent"`
	Good           int `json:"good"`
	Fair           int `json:"fair"`
	NeedsAttention int `json:"needsAttention"`
	NotCalculated  int `json:"notCalculated"`
	Unknown        int `json:"unknown"`
	Total          int `json:"total"`
}

type groupsMetadataRep struct {
	CountByIndicator countByIndicatorRep `json:"countByIndicator"`
}

type groupsRep struct {
	TotalCount    int                `json:"totalCount"`
	Items         []groupRep         `json:"items"`
	Links         api.Links          `json:"_links"`
	Metadata      *groupsMetadataRep `json:"metadata,omitempty"`
	ScoreMetadata *scoreMetadataRep  `json:"scoreMetadata,omitempty"`
}

type memberRep struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
}

type variationEvalsRep struct {
	Value  string `json:"value"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
}

type evaluationsSummaryRep struct {
	Variations []variationEvalsRep `json:"variations"`
}

type impactRep struct {
	Size               string                `json:"size"`
	Percentage         float64               `json:"percentage"`
	Reason             string                `json:"reason"`
	EvaluationsSummary evaluationsSummaryRep `json:"evaluationsSummary"`
}

type experimentsRep struct {
	TotalCount int       `json:"totalCount"`
	Items      []any     `json:"items"`
	Links      api.Links `json:"_links"`
}

// flagEventRep is a flag event (spec 2.22: eventTime a string of Unix ms).
type flagEventRep struct {
	ID              string               `json:"id"`
	ProjectID       string               `json:"projectId"`
	ProjectKey      string               `json:"projectKey"`
	EnvironmentID   string               `json:"environmentId,omitempty"`
	EnvironmentKey  string               `json:"environmentKey,omitempty"`
	FlagKey         string               `json:"flagKey"`
	EventType       string               `json:"eventType"`
	EventTime       jsondoc.MillisString `json:"eventTime"`
	Description     string               `json:"description"`
	AuditLogEntryID string               `json:"auditLogEntryId"`
	Member          *memberRep           `json:"member,omitempty"`
	Actions         []string             `json:"actions"`
	Impact          impactRep            `json:"impact"`
	Experiments     *experimentsRep      `json:"experiments,omitempty"`
}

func newFlagEventRep(e insight.FlagEvent, expandExperiments bool) flagEventRep {
	r := flagEventRep{ID: e.ID, ProjectID: e.ProjectID, ProjectKey: e.ProjectKey, EnvironmentID: e.EnvironmentID,
		EnvironmentKey: e.EnvironmentKey, FlagKey: e.FlagKey, EventType: e.EventType, EventTime: jsondoc.MillisString(e.EventTime),
		Description: e.Description, AuditLogEntryID: e.AuditLogEntryID, Actions: e.Actions,
		Impact: impactRep{Size: e.Impact.Size, Percentage: e.Impact.Percentage, Reason: e.Impact.Reason,
			EvaluationsSummary: evaluationsSummaryRep{Variations: make([]variationEvalsRep, 0, len(e.Impact.Variations))}}}
	if r.Actions == nil {
		r.Actions = []string{}
	}
	for _, v := range e.Impact.Variations {
		r.Impact.EvaluationsSummary.Variations = append(r.Impact.EvaluationsSummary.Variations, variationEvalsRep(v))
	}
	if e.Member != nil {
		r.Member = &memberRep{ID: e.Member.ID, Email: e.Member.Email, FirstName: e.Member.FirstName, LastName: e.Member.LastName}
	}
	if expandExperiments {
		// Experiments are not built: an event has none.
		r.Experiments = &experimentsRep{Items: []any{}, Links: api.Links{}}
	}
	return r
}

type flagEventsRep struct {
	TotalCount int            `json:"totalCount"`
	Items      []flagEventRep `json:"items"`
	Links      api.Links      `json:"_links"`
}

type projectSummaryRep struct {
	ID    string    `json:"_id"`
	Key   string    `json:"key"`
	Name  string    `json:"name"`
	Links api.Links `json:"_links"`
}

type projectSummariesRep struct {
	TotalCount int                 `json:"totalCount"`
	Items      []projectSummaryRep `json:"items"`
	Links      api.Links           `json:"_links"`
}

type repositoryRep struct {
	ID         string               `json:"_id"`
	Version    int64                `json:"version"`
	Key        string               `json:"key"`
	Type       string               `json:"type"`
	URL        string               `json:"url"`
	MainBranch string               `json:"mainBranch"`
	Projects   *projectSummariesRep `json:"projects,omitempty"`
}

type repositoriesRep struct {
	TotalCount int             `json:"totalCount"`
	Items      []repositoryRep `json:"items"`
	Links      api.Links       `json:"_links"`
}

type mappingsRep struct {
	TotalCount int               `json:"totalCount"`
	Items      []insight.Mapping `json:"items"`
	Links      api.Links         `json:"_links"`
}
