package flagimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Trigger runs one import of a configuration, within the request: it
// takes the configuration's lease (a second trigger while a run holds it
// is a 409), reads the source, creates or updates the segments the flags
// match through the segment service and then each flag through the flag
// service, and records the outcome as the run state. The run is
// bounded by RunBudget; flags it did not reach are reported, and a rerun
// picks them up (flags already as the source has them are left alone, so
// a rerun is idempotent). A crash leaves the lease to run out after
// LeaseTTL; every flag change is committed one by one, so what was done
// stays done.
func (s *Service) Trigger(ctx context.Context, projectKey, integrationKey, id string) (*Configuration, *Run, error) {
	c, run, err := s.Get(ctx, projectKey, integrationKey, id)
	if err != nil {
		return nil, nil, err
	}
	if !Runnable(integrationKey) {
		return nil, nil, fault.New(fault.Invalid, "imports from %s cannot run on this server: its configuration is kept, but flags are imported only from %s", integrationKey, strings.Join(runnable(), " and "))
	}
	start := s.Now()
	if run.Running(start) {
		return nil, nil, fault.New(fault.Conflict, "an import of flag import configuration %q is already running (started at %d); wait for it to finish, or after a crash until %d",
			id, run.StartedAt, run.LeaseUntil)
	}
	lease, err := s.takeLease(ctx, c, run, start)
	if err != nil {
		return nil, nil, err
	}
	deadline := start.Add(s.RunBudget)
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	result := s.importFlags(runCtx, c, lease.ResumeAfter, deadline)
	// The outcome is recorded even when the caller went away meanwhile.
	done, err := s.finish(context.WithoutCancel(ctx), c, lease, result)
	if err != nil {
		return nil, nil, err
	}
	return c, done, nil
}

func runnable() []string {
	var out []string
	for _, k := range IntegrationKeys() {
		if Runnable(k) {
			out = append(out, k)
		}
	}
	return out
}

// takeLease marks the configuration as importing, conditional on the run
// state read: of two triggers at once, one wins and the other is a 409.
// The audit entry records who triggered the import.
func (s *Service) takeLease(ctx context.Context, c *Configuration, prev *Run, now time.Time) (*Run, error) {
	// The last finished run's outcome stays readable while this one runs.
	next, cond := &Run{}, store.IfNotExists()
	if prev != nil {
		*next, cond = *prev, store.IfVersion(prev.ItemVersion)
	}
	next.Status, next.RunID, next.StartedAt, next.LeaseUntil = StatusImporting, newID(), now.UnixMilli(), now.Add(s.LeaseTTL).UnixMilli()
	next.ItemVersion++
	put, err := next.put(c, cond)
	if err != nil {
		return nil, err
	}
	_, err = s.Log.Commit(ctx, audit.Change{
		Writes: []store.Write{put, store.Check(store.FlagImportKey(c.ProjectKey, c.IntegrationKey, c.ID), store.IfVersion(c.Version))},
		Kind:   "integration", Resource: Resource(c.ProjectKey, c.IntegrationKey, c.ID), Actions: []string{"triggerFlagImport"},
		Name: c.Name, Href: Href(c.ProjectKey, c.IntegrationKey, c.ID), TitleVerb: "started an import of the flag import configuration",
		Parent: parent(c.ProjectKey), Current: c.Masked(),
		Conflict: fmt.Sprintf("another import of flag import configuration %q started at the same time, or the configuration changed; read it again", c.ID),
	})
	if err != nil {
		return nil, err
	}
	return next, nil
}

// result is what a run did.
type result struct {
	created, updated, unchanged, failed int
	errors                              []RunError
	// sourceFailed: the source could not be read, so nothing was tried.
	sourceFailed bool
	// resumeAfter is where the next run starts ("" when this one went round).
	resumeAfter string
}

func (r *result) fail(id string, status int, msg string, at time.Time) {
	r.failed++
	if len(r.errors) < MaxErrors {
		r.errors = append(r.errors, RunError{IntegrationID: id, Message: msg, StatusCode: status, Timestamp: at.UnixMilli()})
	}
}

// importFlags reads the source and applies every flag, until deadline,
// in key order starting after resumeAfter and coming round to the rest.
func (s *Service) importFlags(ctx context.Context, c *Configuration, resumeAfter string, deadline time.Time) *result {
	res := &result{resumeAfter: resumeAfter}
	src, err := s.sourceFor(c)
	if err != nil {
		res.sourceFailed = true
		res.fail(c.ID, http.StatusInternalServerError, "an internal error occurred", s.Now())
		s.Logger.Error("flag import: no source reader", "integrationId", c.ID, "error", err)
		return res
	}
	flags, segs, err := src.Flags(ctx)
	if err != nil {
		res.sourceFailed = true
		var se *SourceError
		switch {
		case errors.As(err, &se):
			res.fail(c.ID, se.Status, se.Message, s.Now())
		case errors.Is(err, context.DeadlineExceeded):
			res.fail(c.ID, http.StatusGatewayTimeout, fmt.Sprintf("reading the source took longer than the run's %s", s.RunBudget), s.Now())
		default:
			res.fail(c.ID, http.StatusInternalServerError, "an internal error occurred", s.Now())
			s.Logger.Error("flag import: source read failed", "integrationId", c.ID, "error", err)
		}
		return res
	}
	envs, err := s.environmentKeys(ctx, c.ProjectKey)
	if err != nil {
		res.sourceFailed = true
		res.fail(c.ID, s.StatusOf(err), fault.MessageOf(err), s.Now())
		return res
	}
	slices.SortFunc(flags, func(a, b SourceFlag) int { return strings.Compare(a.Key, b.Key) })
	split, _ := slices.BinarySearchFunc(flags, resumeAfter, func(f SourceFlag, k string) int {
		if f.Key <= k {
			return -1
		}
		return 1
	})
	flags = append(flags[split:len(flags):len(flags)], flags[:split]...)
	mapping, problems := envMapping(c.Config.EnvironmentMap(), envs)
	for _, p := range problems {
		res.fail(c.ID, http.StatusBadRequest, p, s.Now())
	}
	segmentsFailed := s.importSegments(ctx, c, segs, mapping, deadline)
	outcomes := map[string]int{}
	// done are the flags imported, each as its import left it.
	type imported struct {
		sf SourceFlag
		f  *flag.Flag
	}
	var done []imported
	stopped := func(i int) bool {
		if !s.Now().After(deadline) && ctx.Err() == nil {
			return false
		}
		res.fail(c.ID, http.StatusServiceUnavailable, fmt.Sprintf("the run's time budget (%s) ran out after %d of %d flags; trigger the import again to import the rest (flags already imported are left as they are)",
			s.RunBudget, i, len(flags)), s.Now())
		res.failed += len(flags) - i - 1
		if i > 0 {
			res.resumeAfter = flags[i-1].Key
		}
		return true
	}
	flagFailed := func(key string, err error) {
		res.fail(c.ID, s.StatusOf(err), fmt.Sprintf("flag %q: %s", key, fault.MessageOf(err)), s.Now())
		if fault.CodeOf(err) == fault.Internal {
			s.Logger.Error("flag import: flag failed", "integrationId", c.ID, "flag", key, "error", err)
		}
	}
	cut := false
	for i, sf := range flags {
		if cut = stopped(i); cut {
			break
		}
		if err := segmentFailure(sf, mapping, segmentsFailed); err != nil {
			flagFailed(sf.Key, err)
			continue
		}
		outcome, f, err := s.importFlag(ctx, c, sf, mapping)
		if err != nil {
			flagFailed(sf.Key, err)
			continue
		}
		outcomes[sf.Key] = outcome
		done = append(done, imported{sf, f})
	}
	if !cut {
		res.resumeAfter = ""
	}
	// Prerequisites name other flags, so they are set once the flags exist.
	for _, d := range done {
		if s.Now().After(deadline) || ctx.Err() != nil {
			break // the next run sets them
		}
		changed, err := s.importPrerequisites(ctx, c, d.sf, d.f, mapping)
		if err != nil {
			flagFailed(d.sf.Key, err)
			delete(outcomes, d.sf.Key)
			continue
		}
		if changed && outcomes[d.sf.Key] == unchanged {
			outcomes[d.sf.Key] = updated
		}
	}
	for _, o := range outcomes {
		switch o {
		case created:
			res.created++
		case updated:
			res.updated++
		default:
			res.unchanged++
		}
	}
	return res
}

// importPrerequisites sets the flag's prerequisites in every mapped
// environment to the source's, through the flag service (which checks
// that they exist, serve the variation named and make no cycle). f is
// the flag as its import left it: environments that already have the
// source's prerequisites need no patch, and a flag needing none is not
// read again.
func (s *Service) importPrerequisites(ctx context.Context, c *Configuration, sf SourceFlag, f *flag.Flag, envs map[string]string) (bool, error) {
	var ops []patch.Op
	for _, from := range slices.Sorted(maps.Keys(sf.Envs)) {
		to, ok := envs[from]
		if !ok {
			continue
		}
		pre := sf.Envs[from].Prerequisites
		if slices.Equal(f.Env(to).Prerequisites, pre) {
			continue
		}
		if pre == nil {
			pre = []flag.Prerequisite{}
		}
		b, _ := json.Marshal(pre)
		ops = append(ops, patch.Op{Op: "replace", Path: "/environments/" + to + "/prerequisites", Value: b})
	}
	if len(ops) == 0 {
		return false, nil
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return false, fmt.Errorf("encode the prerequisites of flag %q: %w", sf.Key, err)
	}
	d, err := s.Flags.Patch(ctx, c.ProjectKey, sf.Key, patch.Patch{Ops: ops, Raw: raw,
		Comment: fmt.Sprintf("Prerequisites imported from %s by flag import configuration %s (%s)", c.IntegrationKey, c.ID, c.Name)})
	if err != nil {
		return false, err
	}
	return d.Flag.Version != f.Version, nil
}

// finish records the run's outcome, conditional on still holding the
// lease: a run whose lease ran out (and was taken by another) leaves the
// other's state alone and answers 409.
func (s *Service) finish(ctx context.Context, c *Configuration, lease *Run, res *result) (*Run, error) {
	now := s.Now().UnixMilli()
	next := *lease
	next.LeaseUntil, next.ItemVersion = 0, lease.ItemVersion+1
	next.Created, next.Updated, next.Unchanged, next.Failed = res.created, res.updated, res.unchanged, res.failed
	next.Errors, next.ResumeAfter = res.errors, res.resumeAfter
	if next.Errors == nil {
		next.Errors = []RunError{}
	}
	imported := res.created + res.updated + res.unchanged
	switch {
	case res.sourceFailed || (imported == 0 && res.failed > 0):
		next.Status = StatusFailed
	case res.failed > 0:
		next.Status = StatusPartial
	default:
		next.Status = StatusComplete
	}
	if imported > 0 || next.Status == StatusComplete {
		next.LastImport = now
	}
	if len(res.errors) > 0 {
		next.LastError = now
	}
	put, err := next.put(c, store.IfVersion(lease.ItemVersion))
	if err != nil {
		return nil, err
	}
	summary := struct {
		Status    string `json:"status"`
		Created   int    `json:"created"`
		Updated   int    `json:"updated"`
		Unchanged int    `json:"unchanged"`
		Failed    int    `json:"failed"`
	}{next.Status, next.Created, next.Updated, next.Unchanged, next.Failed}
	_, err = s.Log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "integration", Resource: Resource(c.ProjectKey, c.IntegrationKey, c.ID),
		Actions: []string{"triggerFlagImport"}, Name: c.Name, Href: Href(c.ProjectKey, c.IntegrationKey, c.ID),
		TitleVerb: "finished an import of the flag import configuration", Parent: parent(c.ProjectKey), Current: summary,
		Comment:  fmt.Sprintf("%s: %d created, %d updated, %d unchanged, %d failed", next.Status, next.Created, next.Updated, next.Unchanged, next.Failed),
		Conflict: fmt.Sprintf("the import of flag import configuration %q ran past its lease and another run (or a delete) took over; its flag changes are kept, its outcome is not recorded", c.ID),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// environmentKeys returns the keys of the project's environments.
func (s *Service) environmentKeys(ctx context.Context, projectKey string) ([]string, error) {
	return record.All(ctx, s.Table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.EnvironmentSKPrefix},
		fmt.Sprintf("environments of project %q", projectKey), func(it store.Item) (string, error) {
			return strings.TrimPrefix(it.SK, store.EnvironmentSKPrefix), nil
		})
}

// envMapping maps source environment keys to the project's: through the
// configuration's environmentMap when it has one (a target the project
// lacks is a problem), else each to the project's environment of the same
// key; source environments mapped nowhere are not imported.
func envMapping(m map[string]string, envs []string) (map[string]string, []string) {
	out := map[string]string{}
	var problems []string
	if m == nil {
		for _, e := range envs {
			out[e] = e
		}
		return out, nil
	}
	for _, from := range slices.Sorted(maps.Keys(m)) {
		to := m[from]
		if !slices.Contains(envs, to) {
			problems = append(problems, fmt.Sprintf("config.environmentMap maps %q to environment %q, which the project does not have; its targeting was not imported", from, to))
			continue
		}
		out[from] = to
	}
	return out, problems
}

// Outcomes of one flag.
const (
	unchanged = iota
	created
	updated
)

// importedTags are what an imported flag or segment is tagged with: the
// source's tags and the configuration's ldTag, sorted, never nil.
func importedTags(c *Configuration, source []string) []string {
	tags := slices.Clone(source)
	if t := c.Config.String("ldTag"); t != "" && !slices.Contains(tags, t) {
		tags = append(tags, t)
	}
	if tags == nil {
		tags = []string{}
	}
	slices.Sort(tags)
	return tags
}

// importedName is the source's name, or the key when it has none.
func importedName(name, key string) string {
	if strings.TrimSpace(name) == "" {
		return key
	}
	return name
}

// importFlag creates the flag when the project lacks it, then brings it
// to what the source has with one JSON patch through the flag service,
// which commits it (audited) only when something differs.
func (s *Service) importFlag(ctx context.Context, c *Configuration, sf SourceFlag, envs map[string]string) (int, *flag.Flag, error) {
	if sf.Problem != "" {
		return 0, nil, fault.New(fault.PatchFailed, "not imported: %s", sf.Problem)
	}
	tags := importedTags(c, sf.Tags)
	maintainer := c.Config.String("ldMaintainer")
	name := importedName(sf.Name, sf.Key)
	outcome := updated
	existing, err := s.Flags.Load(ctx, c.ProjectKey, sf.Key)
	if fault.Is(err, fault.NotFound) {
		in := flag.Input{Key: &sf.Key, Name: &name, Description: sf.Description, Variations: sf.Variations, Tags: tags,
			Temporary: sf.Temporary, MaintainerID: maintainer}
		if sf.Defaults != nil {
			on, off := sf.Defaults.OnVariation, sf.Defaults.OffVariation
			in.Defaults = &flag.DefaultsInput{OnVariation: &on, OffVariation: &off}
		}
		d, err := s.Flags.Create(ctx, c.ProjectKey, in)
		if err != nil {
			return 0, nil, err
		}
		existing, outcome = d.Flag, created
	} else if err != nil {
		return 0, nil, err
	}
	p, err := flagPatch(c, existing, sf, name, tags, maintainer, envs)
	if err != nil {
		return 0, nil, err
	}
	d, err := s.Flags.Patch(ctx, c.ProjectKey, sf.Key, p)
	if err != nil {
		return 0, nil, err
	}
	if outcome == updated && d.Flag.Version == existing.Version {
		return unchanged, d.Flag, nil
	}
	return outcome, d.Flag, nil
}

// flagPatch is the JSON patch that makes f what the source has: its
// settings, its variations (keeping the ids of those at the same place),
// and in every mapped environment its on/off and targeting.
func flagPatch(c *Configuration, f *flag.Flag, sf SourceFlag, name string, tags []string, maintainer string, envs map[string]string) (patch.Patch, error) {
	var ops []patch.Op
	add := func(path string, v any) {
		b, _ := json.Marshal(v)
		ops = append(ops, patch.Op{Op: "replace", Path: path, Value: b})
	}
	add("/name", name)
	add("/description", sf.Description)
	add("/tags", tags)
	if maintainer != "" {
		add("/maintainerId", maintainer)
	}
	if sf.Temporary != nil {
		add("/temporary", *sf.Temporary)
	}
	if len(sf.Variations) > 0 {
		vars := make([]flag.Variation, len(sf.Variations))
		for i, v := range sf.Variations {
			vars[i] = flag.Variation{Value: v.Value, Name: v.Name, Description: v.Description}
			if i < len(f.Variations) {
				vars[i].ID = f.Variations[i].ID
			}
		}
		add("/variations", vars)
	}
	if sf.Defaults != nil {
		add("/defaults", sf.Defaults)
	}
	for _, from := range slices.Sorted(maps.Keys(sf.Envs)) {
		to, ok := envs[from]
		if !ok {
			continue
		}
		e := sf.Envs[from]
		base := "/environments/" + to
		add(base+"/on", e.On)
		add(base+"/targets", nonNil(e.Targets))
		add(base+"/contextTargets", nonNil(e.ContextTargets))
		rules := e.Rules
		if rules == nil {
			rules = []flag.Rule{}
		}
		add(base+"/rules", rules)
		add(base+"/fallthrough", e.Fallthrough)
		if e.OffVariation != nil {
			add(base+"/offVariation", *e.OffVariation)
		}
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return patch.Patch{}, fmt.Errorf("encode the import patch of flag %q: %w", sf.Key, err)
	}
	return patch.Patch{Ops: ops, Raw: raw,
		Comment: fmt.Sprintf("Imported from %s by flag import configuration %s (%s)", c.IntegrationKey, c.ID, c.Name)}, nil
}

func nonNil(t []flag.Target) []flag.Target {
	if t == nil {
		return []flag.Target{}
	}
	return t
}
