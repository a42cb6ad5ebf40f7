package insight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Deployment statuses, named after the events that set them.
const (
	StatusStarted  = "started"
	StatusFinished = "finished"
	StatusFailed   = "failed"
)

// Deployment event types.
const (
	EventStarted  = "started"
	EventFinished = "finished"
	EventFailed   = "failed"
	EventCustom   = "custom"
)

// KindDeployment is the kind of every deployment an event creates.
const KindDeployment = "deployment"

// Limits on what a deployment event may carry.
const (
	MaxVersionLength = 256
	MaxMetadataBytes = 8192
	// maxFutureSkew bounds how far ahead of the clock an eventTime may be.
	maxFutureSkew = 24 * time.Hour
)

// Deployment is one version of one application deployed to one
// environment: the events of that (project, environment, application,
// version) all land on it, so its id is derived from them.
type Deployment struct {
	ID              string         `json:"id"`
	ProjectKey      string         `json:"projectKey"`
	EnvironmentKey  string         `json:"environmentKey"`
	ApplicationKey  string         `json:"applicationKey"`
	ApplicationName string         `json:"applicationName,omitempty"`
	ApplicationKind string         `json:"applicationKind"`
	Version         string         `json:"applicationVersion"`
	VersionName     string         `json:"versionName,omitempty"`
	StartedAt       int64          `json:"startedAt"`
	EndedAt         int64          `json:"endedAt,omitempty"`
	Status          string         `json:"status"`
	Kind            string         `json:"kind"`
	Active          bool           `json:"active"`
	Archived        bool           `json:"archived"`
	Metadata        map[string]any `json:"metadata"`
	// ItemVersion is the store version, for conditional writes.
	ItemVersion int64 `json:"-"`
}

// DurationMs is how long the deployment took, 0 while it runs.
func (d *Deployment) DurationMs() int64 {
	if d.EndedAt == 0 {
		return 0
	}
	return d.EndedAt - d.StartedAt
}

// EventInput is the body of createDeploymentEvent.
type EventInput struct {
	ProjectKey         string          `json:"projectKey"`
	EnvironmentKey     string          `json:"environmentKey"`
	ApplicationKey     string          `json:"applicationKey"`
	ApplicationName    string          `json:"applicationName"`
	ApplicationKind    string          `json:"applicationKind"`
	Version            string          `json:"version"`
	VersionName        string          `json:"versionName"`
	EventType          string          `json:"eventType"`
	EventTime          *jsondoc.Millis `json:"eventTime"` // Unix ms, an integer or a string of digits
	EventMetadata      map[string]any  `json:"eventMetadata"`
	DeploymentMetadata map[string]any  `json:"deploymentMetadata"`
}

// DeploymentID is the id of the deployment of one version of one
// application in one environment: the same for every event of it, so a
// retried event lands on the same deployment.
func DeploymentID(projectKey, envKey, appKey, version string) string {
	h := sha256.Sum256([]byte(projectKey + "\x00" + envKey + "\x00" + appKey + "\x00" + version))
	return hex.EncodeToString(h[:16])
}

func (in *EventInput) validate() error {
	for _, f := range []struct{ name, v string }{
		{"projectKey", in.ProjectKey}, {"environmentKey", in.EnvironmentKey}, {"applicationKey", in.ApplicationKey},
	} {
		if err := environment.ValidKey(f.name, f.v); err != nil {
			return err
		}
	}
	if strings.TrimSpace(in.Version) == "" {
		return fault.New(fault.Invalid, "field \"version\" is required")
	}
	if len(in.Version) > MaxVersionLength || len(in.VersionName) > MaxVersionLength || len(in.ApplicationName) > MaxVersionLength {
		return fault.New(fault.Invalid, "fields \"version\", \"versionName\" and \"applicationName\" must be at most %d characters", MaxVersionLength)
	}
	switch in.EventType {
	case EventStarted, EventFinished, EventFailed, EventCustom:
	case "":
		return fault.New(fault.Invalid, "field \"eventType\" is required: started, finished, failed or custom")
	default:
		return fault.New(fault.Invalid, "field \"eventType\" must be started, finished, failed or custom, not %q", in.EventType)
	}
	switch in.ApplicationKind {
	case "":
		in.ApplicationKind = "server"
	case "server", "browser", "mobile":
	default:
		return fault.New(fault.Invalid, "field \"applicationKind\" must be server, browser or mobile, not %q", in.ApplicationKind)
	}
	for name, m := range map[string]map[string]any{"eventMetadata": in.EventMetadata, "deploymentMetadata": in.DeploymentMetadata} {
		if b, _ := json.Marshal(m); len(b) > MaxMetadataBytes {
			return fault.New(fault.Invalid, "field %q must be at most %d bytes of JSON", name, MaxMetadataBytes)
		}
	}
	return nil
}

// RecordEvent applies one deployment event: started creates (or restarts)
// the deployment, finished and failed end it, custom only records it. An
// event that changes nothing (a retry, or an older event arriving late)
// answers the deployment as it is and writes nothing.
func (s *Service) RecordEvent(ctx context.Context, in EventInput) (*Deployment, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.now()
	t := now.UnixMilli()
	if in.EventTime != nil {
		t = int64(*in.EventTime)
		if t <= 0 || t > now.Add(maxFutureSkew).UnixMilli() {
			return nil, fault.New(fault.Invalid, "field \"eventTime\" must be a Unix time in milliseconds, at most a day ahead of now; got %d", t)
		}
	}
	if _, err := s.envs.Get(ctx, in.ProjectKey, in.EnvironmentKey); err != nil {
		return nil, err
	}
	// Events of one deployment often come together (a pipeline's steps, its
	// retries): one that lost the race is applied again on what won.
	for attempt := 1; ; attempt++ {
		d, err := s.recordOnce(ctx, in, t)
		if err != nil && fault.Is(err, fault.OptimisticLock) && attempt < maxEventAttempts {
			continue
		}
		return d, err
	}
}

// maxEventAttempts bounds how often an event is applied again after losing a race.
const maxEventAttempts = 5

func (s *Service) recordOnce(ctx context.Context, in EventInput, t int64) (*Deployment, error) {
	id := DeploymentID(in.ProjectKey, in.EnvironmentKey, in.ApplicationKey, in.Version)
	old, err := s.Deployment(ctx, id)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return nil, err
	}
	next := applyEvent(old, in, id, t)
	if old != nil && reflect.DeepEqual(old, next) {
		return old, nil
	}
	cond := store.IfNotExists()
	if old != nil {
		cond = store.IfVersion(old.ItemVersion)
		next.ItemVersion = old.ItemVersion + 1
	} else {
		next.ItemVersion = 1
	}
	var extra []store.Write
	if next.Status == StatusFinished && (old == nil || old.Status != StatusFinished || !old.Active) {
		// Before the put: activate marks next active.
		if extra, err = s.activate(ctx, next); err != nil {
			return nil, err
		}
	}
	put, err := next.put(cond)
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{put}, extra...), Kind: "deployment", Resource: "deployment/" + id, Actions: []string{"createDeploymentEvent"},
		Name: in.ApplicationKey + " " + in.Version, Href: DeploymentHref(id),
		TitleVerb: "recorded a " + in.EventType + " event of the deployment", Previous: old, Current: next,
		Conflict: fmt.Sprintf("deployment %q changed under this event; send it again", id),
	})
	if err != nil {
		return nil, err
	}
	return next, nil
}

// activate makes d the active deployment of its application in its
// environment: the pointer moves to it and the deployment it named stops
// being active, all conditional on what was read.
func (s *Service) activate(ctx context.Context, d *Deployment) ([]store.Write, error) {
	k := store.DeploymentActiveKey(d.ProjectKey, d.EnvironmentKey, d.ApplicationKey)
	var writes []store.Write
	cond, version := store.IfNotExists(), int64(0)
	it, err := s.table.Get(ctx, k)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("load the active deployment of %q: %w", d.ApplicationKey, err)
	default:
		cond, version = store.IfVersion(it.Version), it.Version
		if prevID := string(it.Data); prevID != d.ID {
			prev, err := s.Deployment(ctx, prevID)
			switch {
			case fault.Is(err, fault.NotFound):
			case err != nil:
				return nil, err
			case prev.Active:
				prevNext := *prev
				prevNext.Active = false
				prevNext.ItemVersion = prev.ItemVersion + 1
				w, err := prevNext.put(store.IfVersion(prev.ItemVersion))
				if err != nil {
					return nil, err
				}
				writes = append(writes, w)
			}
		}
	}
	d.Active = true
	writes = append(writes, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: []byte(d.ID)}, cond))
	return writes, nil
}

func applyEvent(old *Deployment, in EventInput, id string, t int64) *Deployment {
	var next Deployment
	if old != nil {
		next = *old
		next.Metadata = clone(old.Metadata)
	} else {
		next = Deployment{ID: id, ProjectKey: in.ProjectKey, EnvironmentKey: in.EnvironmentKey, ApplicationKey: in.ApplicationKey,
			Version: in.Version, Kind: KindDeployment, StartedAt: t, Status: StatusStarted, Metadata: map[string]any{}}
	}
	if in.ApplicationName != "" {
		next.ApplicationName = in.ApplicationName
	}
	next.ApplicationKind = in.ApplicationKind
	if in.VersionName != "" {
		next.VersionName = in.VersionName
	}
	for k, v := range in.DeploymentMetadata {
		next.Metadata[k] = v
	}
	switch in.EventType {
	case EventStarted:
		switch {
		case old == nil:
		case old.Status != StatusStarted && t > old.EndedAt:
			// The same version deployed again after it ended.
			next.StartedAt, next.EndedAt, next.Status = t, 0, StatusStarted
		case t < old.StartedAt:
			next.StartedAt = t // a start reported late
		}
	case EventFinished, EventFailed:
		status := StatusFinished
		if in.EventType == EventFailed {
			status = StatusFailed
		}
		if old == nil || old.Status == StatusStarted || t >= old.EndedAt {
			next.Status = status
			next.EndedAt = max(t, next.StartedAt)
		}
		if status == StatusFailed {
			next.Active = false
		}
	}
	return &next
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (d *Deployment) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode deployment %q: %w", d.ID, err)
	}
	k := store.DeploymentKey(d.ID)
	gpk, gsk := store.DeploymentIndexKeys(d.ProjectKey, d.EnvironmentKey, d.StartedAt, d.ID)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: d.ItemVersion, Data: data}, c), nil
}

func decodeDeployment(it store.Item) (*Deployment, error) {
	var d Deployment
	if err := json.Unmarshal(it.Data, &d); err != nil {
		return nil, fmt.Errorf("decode deployment %s: %w", it.PK, err)
	}
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	d.ItemVersion = it.Version
	return &d, nil
}

// DeploymentHref is the API path of a deployment.
func DeploymentHref(id string) string { return "/api/v2/engineering-insights/deployments/" + id }

// deploymentKind describes deployments to the resource kit, which reads
// and updates them; events record them (see Record).
var deploymentKind = resource.Kind[Deployment]{
	Audit: "deployment", Noun: "deployment", Patchable: deploymentPatchable, Called: "a deployment",
	Item: func(d *Deployment) (store.Item, error) {
		data, err := json.Marshal(d)
		gpk, gsk := store.DeploymentIndexKeys(d.ProjectKey, d.EnvironmentKey, d.StartedAt, d.ID)
		return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
	},
	Decode:  decodeDeployment,
	Version: func(d *Deployment) int64 { return d.ItemVersion },
	Name:    func(d *Deployment) string { return d.ApplicationKey + " " + d.Version },
}

// deploymentRef names the deployment with id: 32 lower-case hex digits, or none.
func deploymentRef(id string) resource.Ref {
	_, err := hex.DecodeString(id)
	return resource.Ref{Key: store.DeploymentKey(id), What: fmt.Sprintf("deployment %q", id), Resource: "deployment/" + id,
		Href: DeploymentHref(id), Malformed: len(id) != 32 || strings.ToLower(id) != id || err != nil}
}

// Deployment returns one deployment by id.
func (s *Service) Deployment(ctx context.Context, id string) (*Deployment, error) {
	return s.deployments.Get(ctx, deploymentRef(id))
}

// deploymentPatchable are the fields a JSON patch of a deployment may change.
var deploymentPatchable = map[string]string{
	"status": "updateDeployment", "archived": "updateDeployment", "metadata": "updateDeployment", "endedAt": "updateDeployment",
}

// DeploymentPatchActions returns the actions a JSON patch of a deployment performs.
func DeploymentPatchActions(p patch.Patch) ([]string, error) {
	return deploymentKind.PatchActions(p)
}

// PatchDeployment applies a JSON patch (/status, /archived, /metadata,
// /endedAt) to a deployment. Setting status to finished or failed without
// an end time ends it now; back to started clears the end.
func (s *Service) PatchDeployment(ctx context.Context, id string, p patch.Patch) (*Deployment, error) {
	if _, err := DeploymentPatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.Deployment(ctx, id)
	if err != nil {
		return nil, err
	}
	var next Deployment
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	next.ID, next.ProjectKey, next.EnvironmentKey, next.ApplicationKey, next.Version = old.ID, old.ProjectKey, old.EnvironmentKey, old.ApplicationKey, old.Version
	next.Active, next.Kind, next.StartedAt, next.ItemVersion = old.Active, old.Kind, old.StartedAt, old.ItemVersion
	if next.Metadata == nil {
		next.Metadata = map[string]any{}
	}
	if b, _ := json.Marshal(next.Metadata); len(b) > MaxMetadataBytes {
		return nil, fault.New(fault.Invalid, "field \"metadata\" must be at most %d bytes of JSON", MaxMetadataBytes)
	}
	switch next.Status {
	case StatusStarted:
		next.EndedAt = 0
	case StatusFinished, StatusFailed:
		if next.EndedAt == 0 {
			next.EndedAt = max(s.now().UnixMilli(), next.StartedAt)
		}
		if next.EndedAt < next.StartedAt {
			return nil, fault.New(fault.Invalid, "field \"endedAt\" (%d) must not be before startedAt (%d)", next.EndedAt, next.StartedAt)
		}
	default:
		return nil, fault.New(fault.Invalid, "field \"status\" must be started, finished or failed, not %q", next.Status)
	}
	if next.Status != StatusFinished {
		next.Active = false
	}
	if reflect.DeepEqual(old, &next) {
		return old, nil
	}
	var extra []store.Write
	if next.Status == StatusFinished && !next.Active {
		// Before the put: activate marks next active.
		if extra, err = s.activate(ctx, &next); err != nil {
			return nil, err
		}
	}
	return s.deployments.Update(ctx, deploymentRef(id), old, &next, resource.Change{
		Actions: []string{"updateDeployment"}, Comment: p.Comment, Delta: p.Raw, Also: extra})
}

// DeploymentQuery selects deployments of one environment, newest first.
type DeploymentQuery struct {
	ProjectKey, EnvironmentKey string
	// Applications keeps deployments of these applications; empty keeps all.
	Applications []string
	From, To     int64 // Unix ms, inclusive, on startedAt
	Kind, Status string
	Limit        int
	// After continues below this cursor (a page's next); Before above it
	// (a page's prev).
	After, Before string
}

// DeploymentPage is one page, the number of deployments matching in the
// whole window, and the cursors of the older (Next) and newer (Prev)
// pages ("" when none).
type DeploymentPage struct {
	Items      []*Deployment
	TotalCount int
	Next, Prev string
}

// maxWindowDeployments bounds the deployments one list request reads.
const maxWindowDeployments = 10000

// Deployments lists one environment's deployments started in [From, To].
// The window is one GSI1 range, read in full (bounded) so the total counts
// every match, not just the page.
func (s *Service) Deployments(ctx context.Context, q DeploymentQuery) (DeploymentPage, error) {
	if _, err := s.envs.Get(ctx, q.ProjectKey, q.EnvironmentKey); err != nil {
		return DeploymentPage{}, err
	}
	all, err := s.deploymentsIn(ctx, q.ProjectKey, q.EnvironmentKey, q.From, q.To)
	if err != nil {
		return DeploymentPage{}, err
	}
	// matches are newest first, as the index reads them.
	var matches []*Deployment
	for _, d := range all {
		if len(q.Applications) > 0 && !slices.Contains(q.Applications, d.ApplicationKey) ||
			q.Kind != "" && d.Kind != q.Kind || q.Status != "" && d.Status != q.Status {
			continue
		}
		matches = append(matches, d)
	}
	page := DeploymentPage{TotalCount: len(matches)}
	// The page starts below After (older), or ends above Before (newer).
	start, end := 0, len(matches)
	switch {
	case q.After != "":
		start = sort.Search(len(matches), func(i int) bool { return cursorOf(matches[i]) < q.After })
		end = min(start+q.Limit, len(matches))
	case q.Before != "":
		end = sort.Search(len(matches), func(i int) bool { return cursorOf(matches[i]) <= q.Before })
		start = max(end-q.Limit, 0)
	default:
		end = min(q.Limit, len(matches))
	}
	page.Items = matches[start:end]
	if end < len(matches) && end > start {
		page.Next = cursorOf(matches[end-1])
	}
	if start > 0 && end > start {
		page.Prev = cursorOf(matches[start])
	}
	return page, nil
}

func cursorOf(d *Deployment) string {
	_, sk := store.DeploymentIndexKeys(d.ProjectKey, d.EnvironmentKey, d.StartedAt, d.ID)
	return sk
}

// ValidDeploymentCursor reports whether s can be a deployments cursor.
func ValidDeploymentCursor(s string) bool {
	head, id, ok := strings.Cut(s, "#")
	if !ok || len(head) != 13 || len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.Trim(head, "0123456789") == ""
}

// deploymentsIn reads the deployments of an environment started in [from, to], newest first.
func (s *Service) deploymentsIn(ctx context.Context, projectKey, envKey string, from, to int64) ([]*Deployment, error) {
	q := store.Query{Index: store.IndexGSI1, PK: store.DeploymentsIndexPK(projectKey, envKey),
		SKFrom: store.DeploymentTimeBound(max(from, 0), false), SKTo: store.DeploymentTimeBound(to, true), Descending: true, Limit: 500}
	var out []*Deployment
	for len(out) < maxWindowDeployments {
		page, err := s.table.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list deployments of %s/%s: %w", projectKey, envKey, err)
		}
		for _, it := range page.Items {
			d, err := decodeDeployment(it)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if page.Cursor == "" {
			break
		}
		q.Cursor = page.Cursor
	}
	return out, nil
}
