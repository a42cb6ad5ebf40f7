package flagimport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Deps are what the service works with.
type Deps struct {
	Table    store.Table
	Log      *audit.Log
	Projects *project.Service
	Flags    *flag.Service
	// Segments takes the segments the flags match, before the flags.
	Segments *segment.Service
	// Member checks that a maintainer id names a member (a 404 when not).
	Member func(ctx context.Context, id string) error
	// Guard decides which hosts a source URL may reach (the webhooks' SSRF guard).
	Guard webhook.Guard
	// StatusOf is the HTTP status of an error, for the errors of `_status`.
	StatusOf func(error) int
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil); tests move it to end a run's budget.
	Now func() time.Time
}

// Service creates, reads, patches and deletes configurations and runs imports.
type Service struct {
	Deps
	// client reads sources; its dialer refuses what the guard forbids, so
	// a name that resolves elsewhere after the check still cannot reach it.
	client *http.Client
	// RunBudget bounds one run, reading included: the API function's
	// timeout is 10 s, and a run ends before it with what it managed.
	RunBudget time.Duration
	// LeaseTTL is how long a run blocks another: longer than any run, so
	// only a crashed one's lease ever runs out.
	LeaseTTL time.Duration
}

// Defaults of a run.
const (
	DefaultRunBudget = 8 * time.Second
	DefaultLeaseTTL  = 2 * time.Minute
)

// NewService returns the service.
func NewService(d Deps) *Service {
	if d.StatusOf == nil {
		d.StatusOf = func(error) int { return http.StatusInternalServerError }
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{Deps: d, client: d.Guard.Client(requestTimeout), RunBudget: DefaultRunBudget, LeaseTTL: DefaultLeaseTTL}
}

// Input is the body of a create.
type Input struct {
	Name   *string         `json:"name"`
	Tags   []string        `json:"tags"`
	Config json.RawMessage `json:"config"`
}

func parent(projectKey string) *audit.Parent {
	return &audit.Parent{Name: projectKey, Resource: "proj/" + projectKey, Href: project.Href(projectKey)}
}

func decodeConfig(it store.Item) (*Configuration, error) {
	var c Configuration
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return nil, fmt.Errorf("decode flag import configuration %s: %w", it.SK, err)
	}
	c.Version = it.Version
	return &c, nil
}

func decodeRun(it store.Item) (*Run, error) {
	var r Run
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode flag import run %s: %w", it.SK, err)
	}
	r.ItemVersion = it.Version
	return &r, nil
}

func (c *Configuration) put(cond store.Cond) (store.Write, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode flag import configuration %q: %w", c.ID, err)
	}
	k := store.FlagImportKey(c.ProjectKey, c.IntegrationKey, c.ID)
	pk, sk := store.FlagImportIndexKeys(c.ProjectKey, c.IntegrationKey, c.ID, false)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: c.Version, Data: data}, cond), nil
}

func (r *Run) put(c *Configuration, cond store.Cond) (store.Write, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode flag import run %q: %w", c.ID, err)
	}
	k := store.FlagImportRunKey(c.ProjectKey, c.IntegrationKey, c.ID)
	pk, sk := store.FlagImportIndexKeys(c.ProjectKey, c.IntegrationKey, c.ID, true)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: r.ItemVersion, Data: data}, cond), nil
}

// check validates a configuration's fields and reaches out only as far as
// resolving the source's host (the SSRF guard) and reading the maintainer.
func (s *Service) check(ctx context.Context, c *Configuration) error {
	if err := environment.ValidName("name", c.Name); err != nil {
		return err
	}
	if err := environment.ValidTags("tags", c.Tags); err != nil {
		return err
	}
	if raw := c.Config["baseUrl"]; raw != nil {
		base := c.Config.String("baseUrl")
		u, err := webhook.CheckURL(base)
		if err != nil {
			return fault.New(fault.Invalid, "%s", strings.Replace(fault.MessageOf(err), `field "url"`, `field "config.baseUrl"`, 1))
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return fault.New(fault.Invalid, "field \"config.baseUrl\" must be the server's base URL, without a query or fragment")
		}
		if err := s.Guard.Check(ctx, "config.baseUrl", u); err != nil {
			return err
		}
	}
	if m := c.Config.String("ldMaintainer"); m != "" && s.Member != nil {
		if err := s.Member(ctx, m); fault.Is(err, fault.NotFound) {
			return fault.New(fault.Invalid, "field \"config.ldMaintainer\": member %q not found; give the _id of a member", m)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Create adds a configuration to a project.
func (s *Service) Create(ctx context.Context, projectKey, integrationKey string, in Input) (*Configuration, error) {
	if err := ValidIntegrationKey(integrationKey); err != nil {
		return nil, err
	}
	if len(in.Config) == 0 || string(in.Config) == "null" {
		return nil, fault.New(fault.Invalid, "field \"config\" is required: an object with the %s settings", integrationKey)
	}
	var raw Config
	if err := json.Unmarshal(in.Config, &raw); err != nil {
		return nil, fault.New(fault.Invalid, "field \"config\" must be an object with the %s settings", integrationKey)
	}
	cfg, err := validate(integrationKey, raw)
	if err != nil {
		return nil, err
	}
	guard, err := s.Projects.Guard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	c := &Configuration{ID: newID(), IntegrationKey: integrationKey, ProjectKey: projectKey, Tags: in.Tags, Config: cfg, Version: 1}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	c.Name = integrationKey + " import"
	if in.Name != nil {
		c.Name = *in.Name
	}
	if err := s.check(ctx, c); err != nil {
		return nil, err
	}
	put, err := c.put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	_, err = s.Log.Commit(ctx, audit.Change{
		Writes: []store.Write{put, guard}, Kind: "integration", Resource: Resource(projectKey, integrationKey, c.ID),
		Actions: []string{"createIntegration"}, Name: c.Name, Href: Href(projectKey, integrationKey, c.ID),
		TitleVerb: "created the flag import configuration", Parent: parent(projectKey), Current: c.Masked(),
		Conflict: fmt.Sprintf("project %q changed while the configuration was created; try again", projectKey),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Get returns a configuration and its run state (nil before the first
// run), in one Query.
func (s *Service) Get(ctx context.Context, projectKey, integrationKey, id string) (*Configuration, *Run, error) {
	what := fmt.Sprintf("flag import configuration %q of %s in project %q", id, integrationKey, projectKey)
	if _, ok := schemas[integrationKey]; !ok || environment.ValidKey("projectKey", projectKey) != nil || environment.ValidKey("integrationId", id) != nil {
		return nil, nil, fault.New(fault.NotFound, "%s not found", what)
	}
	if _, err := s.Projects.Get(ctx, projectKey); err != nil {
		return nil, nil, err
	}
	k := store.FlagImportKey(projectKey, integrationKey, id)
	page, err := s.Table.Query(ctx, store.Query{PK: k.PK, SKPrefix: k.SK})
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", what, err)
	}
	var c *Configuration
	var r *Run
	for _, it := range page.Items {
		switch it.SK {
		case k.SK:
			if c, err = decodeConfig(it); err != nil {
				return nil, nil, err
			}
		case store.FlagImportRunKey(projectKey, integrationKey, id).SK:
			if r, err = decodeRun(it); err != nil {
				return nil, nil, err
			}
		}
	}
	if c == nil {
		return nil, nil, fault.New(fault.NotFound, "%s not found", what)
	}
	return c, r, nil
}

// Entry is a configuration with its run state, for lists.
type Entry struct {
	Config *Configuration
	Run    *Run
}

// List returns every configuration of the account with its run state,
// ordered by project, integration key and id.
func (s *Service) List(ctx context.Context) ([]Entry, error) {
	items, err := record.All(ctx, s.Table, store.Query{Index: store.IndexGSI1, PK: store.FlagImportsIndexPK}, "flag import configurations",
		func(it store.Item) (store.Item, error) { return it, nil })
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, it := range items {
		if store.IsFlagImportRun(it.SK) {
			r, err := decodeRun(it)
			if err != nil {
				return nil, err
			}
			// A run item follows its configuration in the index's order.
			if n := len(out); n > 0 && it.SK == store.FlagImportRunKey(out[n-1].Config.ProjectKey, out[n-1].Config.IntegrationKey, out[n-1].Config.ID).SK {
				out[n-1].Run = r
			}
			continue
		}
		c, err := decodeConfig(it)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Config: c})
	}
	return out, nil
}

// patchable maps the fields a JSON patch may change (the reference: config,
// tags and name) to their action.
var patchable = map[string]string{"name": "updateIntegration", "tags": "updateIntegration", "config": "updateIntegration"}

// PatchActions are the actions a JSON patch of a configuration performs.
func PatchActions(p patch.Patch) ([]string, error) {
	return p.Actions(patchable, "a flag import configuration")
}

// editable is what a patch applies to: the masked configuration's editable fields.
type editable struct {
	Name   string   `json:"name"`
	Tags   []string `json:"tags"`
	Config Config   `json:"config"`
}

// Patch applies a JSON patch to a configuration's name, tags and config,
// and returns it with its run state (as read before the patch, which
// leaves it alone). The patch sees secrets masked; a secret left at the
// mask keeps its stored value. The audit entry's delta has every secret
// masked too.
func (s *Service) Patch(ctx context.Context, projectKey, integrationKey, id string, p patch.Patch) (*Configuration, *Run, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, nil, err
	}
	old, run, err := s.Get(ctx, projectKey, integrationKey, id)
	if err != nil {
		return nil, nil, err
	}
	masked := old.Masked()
	var doc editable
	if err := p.ApplyTo(editable{Name: masked.Name, Tags: masked.Tags, Config: masked.Config}, &doc); err != nil {
		return nil, nil, err
	}
	if doc.Config == nil {
		return nil, nil, fault.New(fault.Invalid, "field \"config\" is required: an object with the %s settings", integrationKey)
	}
	keepSecrets(integrationKey, old.Config, doc.Config)
	cfg, err := validate(integrationKey, doc.Config)
	if err != nil {
		return nil, nil, err
	}
	next := &Configuration{ID: old.ID, IntegrationKey: integrationKey, ProjectKey: projectKey, Name: doc.Name, Tags: doc.Tags,
		Config: cfg, Version: old.Version + 1}
	if next.Tags == nil {
		next.Tags = []string{}
	}
	if err := s.check(ctx, next); err != nil {
		return nil, nil, err
	}
	oldCfg, _ := json.Marshal(old.Config)
	nextCfg, _ := json.Marshal(next.Config)
	if old.Name == next.Name && slices.Equal(old.Tags, next.Tags) && string(oldCfg) == string(nextCfg) {
		return old, run, nil // nothing changed: no new version, no audit entry
	}
	put, err := next.put(store.IfVersion(old.Version))
	if err != nil {
		return nil, nil, err
	}
	_, err = s.Log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "integration", Resource: Resource(projectKey, integrationKey, id),
		Actions: []string{"updateIntegration"}, Name: next.Name, Href: Href(projectKey, integrationKey, id),
		TitleVerb: "updated the flag import configuration", Comment: p.Comment, Parent: parent(projectKey),
		Previous: old.Masked(), Current: next.Masked(), Delta: maskDelta(integrationKey, p),
		Conflict: fmt.Sprintf("flag import configuration %q was changed by another request; read it again and retry", id),
	})
	if err != nil {
		return nil, nil, err
	}
	return next, run, nil
}

// maskDelta is the patch as sent with every secret value replaced: the
// audit entry keeps what was changed, never a credential.
func maskDelta(integrationKey string, p patch.Patch) json.RawMessage {
	ops := slices.Clone(p.Ops)
	mask, _ := json.Marshal(Mask)
	for i, op := range ops {
		seg := patch.Segments(op.Path)
		switch {
		case op.Value == nil:
		case len(seg) == 1 && seg[0] == "config":
			var c Config
			if json.Unmarshal(op.Value, &c) == nil {
				ops[i].Value, _ = json.Marshal(c.Masked(integrationKey))
			} else {
				ops[i].Value = mask
			}
		case len(seg) >= 2 && seg[0] == "config" && isSecret(integrationKey, seg[1]):
			ops[i].Value = mask
		}
	}
	out, _ := json.Marshal(ops)
	return out
}

func isSecret(integrationKey, name string) bool {
	for _, f := range schemas[integrationKey] {
		if f.name == name {
			return f.secret
		}
	}
	return false
}

// Delete removes a configuration and its run state. A running import
// refuses it (409): its flags would keep changing after the delete.
func (s *Service) Delete(ctx context.Context, projectKey, integrationKey, id string) error {
	old, run, err := s.Get(ctx, projectKey, integrationKey, id)
	if err != nil {
		return err
	}
	if run.Running(s.Now()) {
		return fault.New(fault.Conflict, "an import of flag import configuration %q is running; delete it when the run has finished", id)
	}
	writes := []store.Write{store.Delete(store.FlagImportKey(projectKey, integrationKey, id), store.IfVersion(old.Version))}
	if run != nil {
		writes = append(writes, store.Delete(store.FlagImportRunKey(projectKey, integrationKey, id), store.IfVersion(run.ItemVersion)))
	}
	_, err = s.Log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "integration", Resource: Resource(projectKey, integrationKey, id),
		Actions: []string{"deleteIntegration"}, Name: old.Name, Href: Href(projectKey, integrationKey, id),
		TitleVerb: "deleted the flag import configuration", Parent: parent(projectKey), Previous: old.Masked(),
		Conflict: fmt.Sprintf("flag import configuration %q was changed, or an import of it started, during the delete; try again", id),
	})
	return err
}
