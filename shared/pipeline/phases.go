package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
)

// Phase statuses as a release reports them (ReleasePhase.status).
const (
	StatusNotStarted = "not_started"
	StatusActive     = "active"
	StatusCompleted  = "completed"
)

// PhaseAction is the policy action of every change to a release's phases,
// LaunchDarkly's flag action for a phase status update; the legacy JSON
// patch marks the same phases complete, so it needs the same right.
const PhaseAction = "updateReleasePhaseStatus"

// maxNotify bounds the member ids and team keys one audience notifies.
const maxNotify = 100

// Status is the phase's status: completed, active (started) or not_started.
func (p *ReleasePhase) Status() string {
	switch {
	case p.Complete:
		return StatusCompleted
	case p.Started:
		return StatusActive
	}
	return StatusNotStarted
}

// GuardianConfig is an audience's release guardian configuration.
type GuardianConfig struct {
	MonitoringWindowMilliseconds int64  `json:"monitoringWindowMilliseconds"`
	RolloutWeight                int64  `json:"rolloutWeight"`
	RollbackOnRegression         bool   `json:"rollbackOnRegression"`
	RandomizationUnit            string `json:"randomizationUnit"`
}

// AudienceConfigInput is the extra configuration of one audience given
// when its phase starts (the reference's ReleaserAudienceConfigInput).
type AudienceConfigInput struct {
	AudienceID                   string          `json:"audienceId"`
	ReleaseGuardianConfiguration *GuardianConfig `json:"releaseGuardianConfiguration"`
	NotifyMemberIDs              []string        `json:"notifyMemberIds"`
	NotifyTeamKeys               []string        `json:"notifyTeamKeys"`
}

// PhaseStatusInput is the body of updatePhaseStatus.
type PhaseStatusInput struct {
	Status    string                `json:"status"`
	Audiences []AudienceConfigInput `json:"audiences"`
}

// targetStatus reads the wanted status. "started" is taken for active
// because LaunchDarkly's own example body sends "Started" while its guide
// says "active".
func targetStatus(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", fault.New(fault.Invalid, "field \"status\" is required: active (start the phase) or completed")
	case "active", "started":
		return StatusActive, nil
	case "completed", "complete":
		return StatusCompleted, nil
	}
	return "", fault.New(fault.Invalid, "field \"status\" must be active or completed, not %q", s)
}

func phaseLabel(p ReleasePhase) string { return fmt.Sprintf("%q (%s)", p.Name, p.ID) }

// requireEarlierComplete refuses to start or complete phase i while an
// earlier phase is not complete: phases run in their pipeline's order.
func (r *Release) requireEarlierComplete(i int, verb string) error {
	for j := 0; j < i; j++ {
		if !r.Phases[j].Complete {
			return fault.New(fault.Invalid, "phase %s cannot be %s before phase %s is complete: phases run in order",
				phaseLabel(r.Phases[i]), verb, phaseLabel(r.Phases[j]))
		}
	}
	return nil
}

// complete marks phase i complete (started too, if it was not).
func (r *Release) complete(i int, now int64) error {
	if r.Phases[i].Complete {
		return nil
	}
	if err := r.requireEarlierComplete(i, "completed"); err != nil {
		return err
	}
	ph := &r.Phases[i]
	if !ph.Started {
		ph.Started, ph.StartedDate = true, now
	}
	ph.Complete, ph.CompletionDate = true, now
	return nil
}

// reopen marks phase i incomplete again; no later phase may have started.
func (r *Release) reopen(i int) error {
	if !r.Phases[i].Complete {
		return nil
	}
	for j := i + 1; j < len(r.Phases); j++ {
		if r.Phases[j].Started || r.Phases[j].Complete {
			return fault.New(fault.Invalid, "phase %s cannot be marked incomplete: the later phase %s has started",
				phaseLabel(r.Phases[i]), phaseLabel(r.Phases[j]))
		}
	}
	r.Phases[i].Complete, r.Phases[i].CompletionDate = false, 0
	return nil
}

// configure merges the audiences' extra configuration into phase i.
func (r *Release) configure(i int, in []AudienceConfigInput) error {
	ph := &r.Phases[i]
	seen := map[string]bool{}
	for k, a := range in {
		field := fmt.Sprintf("audiences[%d]", k)
		idx := -1
		for n, ra := range ph.Audiences {
			if ra.ID == a.AudienceID {
				idx = n
			}
		}
		switch {
		case a.AudienceID == "":
			return fault.New(fault.Invalid, "field %q is required", field+".audienceId")
		case idx < 0:
			return fault.New(fault.Invalid, "field %q: phase %s has no audience %q", field+".audienceId", phaseLabel(*ph), a.AudienceID)
		case seen[a.AudienceID]:
			return fault.New(fault.Invalid, "field %q: audience %q is given twice", field+".audienceId", a.AudienceID)
		case len(a.NotifyMemberIDs) > maxNotify:
			return fault.New(fault.Invalid, "field %q holds at most %d member ids", field+".notifyMemberIds", maxNotify)
		case len(a.NotifyTeamKeys) > maxNotify:
			return fault.New(fault.Invalid, "field %q holds at most %d team keys", field+".notifyTeamKeys", maxNotify)
		}
		seen[a.AudienceID] = true
		if g := a.ReleaseGuardianConfiguration; g != nil {
			switch {
			case g.MonitoringWindowMilliseconds < 0:
				return fault.New(fault.Invalid, "field %q must not be negative", field+".releaseGuardianConfiguration.monitoringWindowMilliseconds")
			case g.RolloutWeight < 0:
				return fault.New(fault.Invalid, "field %q must not be negative", field+".releaseGuardianConfiguration.rolloutWeight")
			}
		}
		// Only an audience its pipeline configured (approvals, a guarded
		// rollout) takes extra configuration: an immediate audience has no
		// release strategy for it to complete.
		raw := ph.Audiences[idx].Configuration
		if len(raw) == 0 || string(raw) == "null" {
			return fault.New(fault.Invalid, "field %q: audience %q has no configuration in its pipeline (no approval, no guarded rollout) for this one to complete", field+".audienceId", a.AudienceID)
		}
		conf := map[string]any{}
		if err := json.Unmarshal(raw, &conf); err != nil {
			return fmt.Errorf("decode configuration of audience %q: %w", a.AudienceID, err)
		}
		if a.ReleaseGuardianConfiguration != nil {
			conf["releaseGuardianConfiguration"] = a.ReleaseGuardianConfiguration
		}
		if a.NotifyMemberIDs != nil {
			conf["notifyMemberIds"] = a.NotifyMemberIDs
		}
		if a.NotifyTeamKeys != nil {
			conf["notifyTeamKeys"] = a.NotifyTeamKeys
		}
		data, err := json.Marshal(conf)
		if err != nil {
			return fmt.Errorf("encode configuration of audience %q: %w", a.AudienceID, err)
		}
		ph.Audiences[idx].Configuration = data
	}
	return nil
}

// clone copies a release deeply enough to change its phases.
func (r *Release) clone() *Release {
	next := *r
	next.Phases = make([]ReleasePhase, len(r.Phases))
	for i, ph := range r.Phases {
		ph.Audiences = append([]ReleaseAudience(nil), ph.Audiences...)
		next.Phases[i] = ph
	}
	return &next
}

// UpdatePhaseStatus starts (active) or completes a phase of a flag's
// release. Phases start and complete in order. Asking for the status a
// phase already has changes nothing (a retried request answers the same
// release), unless audiences bring new configuration.
func (s *Service) UpdatePhaseStatus(ctx context.Context, projectKey, flagKey, phaseID string, in PhaseStatusInput) (*Release, error) {
	old, err := s.Release(ctx, projectKey, flagKey)
	if err != nil {
		return nil, err
	}
	i := -1
	for n, ph := range old.Phases {
		if ph.ID == phaseID {
			i = n
		}
	}
	if i < 0 {
		return nil, fault.New(fault.NotFound, "phase %q not found in the release of flag %q", phaseID, flagKey)
	}
	status, err := targetStatus(in.Status)
	if err != nil {
		return nil, err
	}
	next, now := old.clone(), s.now().UnixMilli()
	ph := &next.Phases[i]
	switch status {
	case StatusActive:
		if ph.Complete {
			return nil, fault.New(fault.Invalid, "phase %s is already complete and cannot start again; mark it incomplete first (PATCH the release)", phaseLabel(*ph))
		}
		if err := next.requireEarlierComplete(i, "started"); err != nil {
			return nil, err
		}
		if !ph.Started {
			ph.Started, ph.StartedDate = true, now
		}
		if err := next.configure(i, in.Audiences); err != nil {
			return nil, err
		}
	case StatusCompleted:
		if len(in.Audiences) > 0 {
			return nil, fault.New(fault.Invalid, "field \"audiences\" configures a phase as it starts; it is not taken with status completed")
		}
		if err := next.complete(i, now); err != nil {
			return nil, err
		}
	}
	verb := map[string]string{StatusActive: "started", StatusCompleted: "completed"}[status]
	return s.commitRelease(ctx, old, next, audit.Change{
		TitleVerb: fmt.Sprintf("%s phase %s of the release of", verb, ph.Name),
	})
}

// phasePatchPath reads /phases/{i}/complete, the one path the legacy patch
// may change. LaunchDarkly's description writes /phase/{i}/complete while
// its example writes /phases/{i}/complete: both are taken.
func phasePatchPath(path string, n int) (int, bool) {
	seg := patch.Segments(path)
	if len(seg) != 3 || (seg[0] != "phases" && seg[0] != "phase") || seg[2] != "complete" {
		return 0, false
	}
	i, err := strconv.Atoi(seg[1])
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != seg[1] {
		return 0, false
	}
	return i, true
}

// PatchRelease applies a legacy JSON patch that marks phases complete or
// incomplete by index, in the order given, all or nothing.
func (s *Service) PatchRelease(ctx context.Context, projectKey, flagKey string, p patch.Patch) (*Release, error) {
	old, err := s.Release(ctx, projectKey, flagKey)
	if err != nil {
		return nil, err
	}
	next, now := old.clone(), s.now().UnixMilli()
	for k, op := range p.Ops {
		if op.Op != "replace" {
			return nil, fault.New(fault.Invalid, "patch operation %d: op %q is not allowed; a release takes only replace of /phases/{index}/complete", k, op.Op)
		}
		i, ok := phasePatchPath(op.Path, len(next.Phases))
		if !ok {
			return nil, fault.New(fault.Invalid, "patch operation %d: path %q cannot be patched; a release takes only /phases/{index}/complete with index 0 to %d", k, op.Path, len(next.Phases)-1)
		}
		var done bool
		if err := json.Unmarshal(op.Value, &done); err != nil {
			return nil, fault.New(fault.Invalid, "patch operation %d: value of %q must be true or false", k, op.Path)
		}
		if done {
			err = next.complete(i, now)
		} else {
			err = next.reopen(i)
		}
		if err != nil {
			return nil, err
		}
	}
	return s.commitRelease(ctx, old, next, audit.Change{TitleVerb: "updated the phases of the release of", Comment: p.Comment, Delta: p.Raw})
}

// commitRelease writes next over old on old's version, through the audit
// log; when next changes nothing, old is answered as is and nothing is written.
func (s *Service) commitRelease(ctx context.Context, old, next *Release, c audit.Change) (*Release, error) {
	a, _ := json.Marshal(old)
	b, err := json.Marshal(next)
	if err != nil {
		return nil, fmt.Errorf("encode release of flag %q: %w", old.FlagKey, err)
	}
	if string(a) == string(b) {
		return old, nil
	}
	next.Version = old.Version + 1
	k := store.ReleaseKey(old.ProjectKey, old.FlagKey)
	c.Writes = []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: next.Version, Data: b}, store.IfVersion(old.Version))}
	c.Kind, c.Resource, c.Actions = "flag", releaseResource(old), []string{PhaseAction}
	c.Name, c.Href = s.flagName(ctx, old), ReleaseHref(old.ProjectKey, old.FlagKey)
	c.Previous, c.Current = old, next
	c.Conflict = fmt.Sprintf("the release of flag %q was changed by another request; read it again and retry", old.FlagKey)
	if _, err := s.log.Commit(ctx, c); err != nil {
		return nil, err
	}
	return next, nil
}

// DeleteRelease takes a flag out of its pipeline: its release is removed,
// on the version it was read at.
func (s *Service) DeleteRelease(ctx context.Context, projectKey, flagKey string) error {
	old, err := s.Release(ctx, projectKey, flagKey)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.ReleaseKey(projectKey, flagKey), store.IfVersion(old.Version))},
		Kind:   "flag", Resource: releaseResource(old), Actions: []string{"deleteRelease"},
		Name: s.flagName(ctx, old), Href: ReleaseHref(projectKey, flagKey),
		TitleVerb: "removed the flag from release pipeline " + old.Name + ":", Previous: old,
		Conflict: fmt.Sprintf("the release of flag %q was changed by another request; read it again and retry", flagKey),
	})
	return err
}

func releaseResource(r *Release) string {
	return "proj/" + r.ProjectKey + ":env/*:flag/" + r.FlagKey
}

// flagName is the flag's display name for audit entries; its key when the
// flag cannot be read (the release is still the thing changed).
func (s *Service) flagName(ctx context.Context, r *Release) string {
	if f, err := s.flags.Load(ctx, r.ProjectKey, r.FlagKey); err == nil {
		return f.Name
	}
	return r.FlagKey
}
