package aiconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Actions are the actions `_access` reports on an AI Config and its variations.
var Actions = []string{"updateAIConfig", "deleteAIConfig", "createAIConfigVariation", "updateAIConfigVariation", "deleteAIConfigVariation"}

// ModelActions are the actions `_access` reports on a model config.
var ModelActions = []string{"deleteAIModelConfig"}

// Href is the API path of an AI Config.
func Href(projectKey, configKey string) string {
	return "/api/v2/projects/" + projectKey + "/ai-configs/" + configKey
}

// VariationHref is the API path of a variation.
func VariationHref(projectKey, configKey, variationKey string) string {
	return Href(projectKey, configKey) + "/variations/" + variationKey
}

// ModelHref is the API path of a model config.
func ModelHref(projectKey, modelKey string) string {
	return "/api/v2/projects/" + projectKey + "/ai-configs/model-configs/" + modelKey
}

func resource(projectKey, configKey string) string {
	return "proj/" + projectKey + ":aiconfig/" + configKey
}

func modelResource(projectKey, modelKey string) string {
	return "proj/" + projectKey + ":ai-model-config/" + modelKey
}

// Projects is what the service needs to know of projects and their environments.
type Projects interface {
	// Check returns a not-found fault when the project does not exist.
	Check(ctx context.Context, projectKey string) error
	// ReviewRequired names an environment of the project whose approval
	// settings require review of AI Config changes, or "" when none does.
	ReviewRequired(ctx context.Context, projectKey string) (string, error)
}

// Service manages AI Configs, their variations and model configs.
type Service struct {
	table    store.Table
	log      *audit.Log
	projects Projects
	now      func() time.Time
}

// NewService returns the AI Config service over table.
func NewService(table store.Table, log *audit.Log, projects Projects, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: projects, now: now}
}

// Full is an AI Config with the latest version of each of its variations.
type Full struct {
	*Config
	Variations []*Variation
}

func encode(what string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return data, nil
}

func decodeConfig(it store.Item) (*Config, error) {
	var c Config
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return nil, fmt.Errorf("decode AI Config %s: %w", it.SK, err)
	}
	c.Version = it.Version
	return &c, nil
}

func decodeVariation(it store.Item) (*Variation, error) {
	var v Variation
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return nil, fmt.Errorf("decode AI Config variation %s: %w", it.SK, err)
	}
	return &v, nil
}

func decodeModel(it store.Item) (*ModelConfig, error) {
	var m ModelConfig
	if err := json.Unmarshal(it.Data, &m); err != nil {
		return nil, fmt.Errorf("decode AI model config %s: %w", it.SK, err)
	}
	m.stored = it.Version
	return &m, nil
}

func (c *Config) put(projectKey string, cond store.Cond) (store.Write, error) {
	data, err := encode(fmt.Sprintf("AI Config %q", c.Key), c)
	if err != nil {
		return store.Write{}, err
	}
	k := store.AIConfigKey(projectKey, c.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: c.Version, Data: data}, cond), nil
}

// putVersion writes a new version item; it must not exist yet, so two
// writers of the same next version cannot both succeed.
func (v *Variation) putVersion(projectKey, configKey string) (store.Write, error) {
	data, err := encode(fmt.Sprintf("AI Config variation %q", v.Key), v)
	if err != nil {
		return store.Write{}, err
	}
	k := store.AIVariationVersionKey(projectKey, configKey, v.Key, v.Version)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.IfNotExists()), nil
}

func (s *Service) checkProject(ctx context.Context, projectKey string) error {
	if environment.ValidKey("projectKey", projectKey) != nil {
		return fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	return s.projects.Check(ctx, projectKey)
}

// loadConfig reads one AI Config without its variations.
func (s *Service) loadConfig(ctx context.Context, projectKey, configKey string) (*Config, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	if environment.ValidKey("configKey", configKey) != nil {
		return nil, fault.New(fault.NotFound, "AI Config %q not found in project %q", configKey, projectKey)
	}
	return record.Load(ctx, s.table, store.AIConfigKey(projectKey, configKey), fmt.Sprintf("AI Config %q in project %q", configKey, projectKey), decodeConfig)
}

// latest keeps the highest version of each variation, in key order, from
// version items read in sort-key order.
func latest(all []*Variation) []*Variation {
	byKey := map[string]*Variation{}
	for _, v := range all {
		if cur, ok := byKey[v.Key]; !ok || v.Version > cur.Version {
			byKey[v.Key] = v
		}
	}
	out := make([]*Variation, 0, len(byKey))
	for _, v := range byKey {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *Variation) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (s *Service) variationsOf(ctx context.Context, projectKey, configKey string) ([]*Variation, error) {
	all, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.AIConfigVariationsPrefix(configKey)},
		fmt.Sprintf("variations of AI Config %q", configKey), decodeVariation)
	if err != nil {
		return nil, err
	}
	return latest(all), nil
}

// GetConfig returns one AI Config with its variations.
func (s *Service) GetConfig(ctx context.Context, projectKey, configKey string) (*Full, error) {
	c, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	vars, err := s.variationsOf(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	return &Full{Config: c, Variations: vars}, nil
}

// ListConfigs returns every AI Config of a project, by key, with its variations.
func (s *Service) ListConfigs(ctx context.Context, projectKey string) ([]*Full, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	part := store.ProjectPartition(projectKey)
	configs, err := record.All(ctx, s.table, store.Query{PK: part, SKPrefix: store.AIConfigPrefix}, "AI Configs of project "+projectKey, decodeConfig)
	if err != nil {
		return nil, err
	}
	byConfig, err := s.variationsByConfig(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	out := make([]*Full, len(configs))
	for i, c := range configs {
		out[i] = &Full{Config: c, Variations: latest(byConfig[c.Key])}
	}
	return out, nil
}

// variationsByConfig reads every version of every variation of a project
// in one query, grouped by the key of their AI Config.
func (s *Service) variationsByConfig(ctx context.Context, projectKey string) (map[string][]*Variation, error) {
	type keyed struct {
		config string
		v      *Variation
	}
	vars, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.AIVariationsPrefix}, "AI Config variations of project "+projectKey, func(it store.Item) (keyed, error) {
		v, err := decodeVariation(it)
		return keyed{config: strings.SplitN(strings.TrimPrefix(it.SK, store.AIVariationsPrefix), "#", 2)[0], v: v}, err
	})
	if err != nil {
		return nil, err
	}
	byConfig := map[string][]*Variation{}
	for _, kv := range vars {
		byConfig[kv.config] = append(byConfig[kv.config], kv.v)
	}
	return byConfig, nil
}

func validMode(mode string) error {
	switch mode {
	case ModeCompletion, ModeAgent, ModeJudge:
		return nil
	}
	return fault.New(fault.Invalid, "field \"mode\" must be completion, agent or judge, not %q", mode)
}

// CreateConfig stores a new AI Config and, when given, its default variation.
func (s *Service) CreateConfig(ctx context.Context, projectKey string, in ConfigInput) (*Full, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	if err := environment.ValidKey("key", in.Key); err != nil {
		return nil, err
	}
	if err := environment.ValidName("name", in.Name); err != nil {
		return nil, err
	}
	if in.Mode == "" {
		in.Mode = ModeCompletion
	}
	if err := validMode(in.Mode); err != nil {
		return nil, err
	}
	if in.Tags == nil {
		in.Tags = []string{}
	}
	if err := environment.ValidTags("tags", in.Tags); err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	c := &Config{Key: in.Key, Name: in.Name, Description: in.Description, Mode: in.Mode, Tags: in.Tags,
		EvaluationMetricKey: in.EvaluationMetricKey, IsInverted: in.IsInverted, CreatedAt: now, UpdatedAt: now, Version: 1}
	put, err := c.put(projectKey, store.IfNotExists())
	if err != nil {
		return nil, err
	}
	writes := []store.Write{put}
	full := &Full{Config: c, Variations: []*Variation{}}
	if in.DefaultVariation != nil {
		v, more, err := s.newVariation(ctx, projectKey, in.Key, *in.DefaultVariation, "defaultVariation.")
		if err != nil {
			return nil, err
		}
		writes = append(writes, more...)
		full.Variations = []*Variation{v}
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "aiconfig", Resource: resource(projectKey, c.Key), Actions: []string{"createAIConfig"},
		Name: c.Name, Href: Href(projectKey, c.Key), TitleVerb: "created the AI Config", Current: full,
		Conflict: fmt.Sprintf("AI Config %q already exists in project %q", c.Key, projectKey),
	}); err != nil {
		return nil, conflictAsExists(err)
	}
	return full, nil
}

// conflictAsExists turns the 409 of a failed not-exists condition into the
// conflict code a create answers.
func conflictAsExists(err error) error {
	if fault.Is(err, fault.OptimisticLock) {
		return fault.Wrap(err, fault.Conflict, "%s", fault.MessageOf(err))
	}
	return err
}

// PatchConfig replaces the fields the body gives.
func (s *Service) PatchConfig(ctx context.Context, projectKey, configKey string, p ConfigPatch) (*Full, error) {
	old, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	next := *old
	if p.Name != nil {
		if err := environment.ValidName("name", *p.Name); err != nil {
			return nil, err
		}
		next.Name = *p.Name
	}
	if p.Description != nil {
		next.Description = *p.Description
	}
	if p.Tags != nil {
		next.Tags = *p.Tags
		if next.Tags == nil {
			next.Tags = []string{}
		}
		if err := environment.ValidTags("tags", next.Tags); err != nil {
			return nil, err
		}
	}
	if p.EvaluationMetricKey != nil {
		next.EvaluationMetricKey = *p.EvaluationMetricKey
	}
	if p.IsInverted != nil {
		next.IsInverted = p.IsInverted
	}
	vars, err := s.variationsOf(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	before, _ := json.Marshal(old)
	after, _ := json.Marshal(&next)
	if string(before) == string(after) {
		return &Full{Config: old, Variations: vars}, nil
	}
	next.Version = old.Version + 1
	next.UpdatedAt = s.now().UnixMilli()
	put, err := next.put(projectKey, store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	delta, _ := json.Marshal(p)
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "aiconfig", Resource: resource(projectKey, configKey), Actions: []string{"updateAIConfig"},
		Name: next.Name, Href: Href(projectKey, configKey), TitleVerb: "updated the AI Config", Previous: old, Current: &next, Delta: delta,
		Conflict: fmt.Sprintf("AI Config %q was changed by another request; read it again and retry", configKey),
	}); err != nil {
		return nil, err
	}
	return &Full{Config: &next, Variations: vars}, nil
}

// DeleteConfig removes an AI Config and every version of its variations.
func (s *Service) DeleteConfig(ctx context.Context, projectKey, configKey string) error {
	c, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return err
	}
	items, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.AIConfigVariationsPrefix(configKey)},
		fmt.Sprintf("variations of AI Config %q", configKey), func(it store.Item) (store.Key, error) { return it.Key(), nil })
	if err != nil {
		return err
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.AIConfigKey(projectKey, configKey), store.IfVersion(c.Version))},
		Kind:   "aiconfig", Resource: resource(projectKey, configKey), Actions: []string{"deleteAIConfig"},
		Name: c.Name, Href: Href(projectKey, configKey), TitleVerb: "deleted the AI Config", Previous: c,
		Conflict: fmt.Sprintf("AI Config %q was changed by another request; try again", configKey),
	}); err != nil {
		return err
	}
	// The versions go after the audited delete: without their AI Config no read reaches them.
	for _, k := range items {
		if err := s.table.Delete(ctx, k, store.Cond{}); err != nil {
			return fmt.Errorf("remove %s of AI Config %q: %w", k.SK, configKey, err)
		}
	}
	return nil
}

// validVariation checks the fields of a variation version; field prefixes names.
func validVariation(v *Variation, field string) error {
	if err := environment.ValidKey(field+"key", v.Key); err != nil {
		return err
	}
	if err := environment.ValidName(field+"name", v.Name); err != nil {
		return err
	}
	for i, m := range v.Messages {
		if strings.TrimSpace(m.Role) == "" {
			return fault.New(fault.Invalid, "field %q is required", fmt.Sprintf("%smessages[%d].role", field, i))
		}
	}
	if v.JudgeConfiguration != nil {
		for i, j := range v.JudgeConfiguration.Judges {
			if j.JudgeConfigKey == "" {
				return fault.New(fault.Invalid, "field %q is required", fmt.Sprintf("%sjudgeConfiguration.judges[%d].judgeConfigKey", field, i))
			}
			if j.SamplingRate < 0 || j.SamplingRate > 1 {
				return fault.New(fault.Invalid, "field %q must be between 0 and 1", fmt.Sprintf("%sjudgeConfiguration.judges[%d].samplingRate", field, i))
			}
		}
	}
	for i, t := range v.Tools {
		if t.Key == "" {
			return fault.New(fault.Invalid, "field %q is required", fmt.Sprintf("%stools[%d].key", field, i))
		}
	}
	return nil
}

// modelRef checks a reference to a model config and returns the version to
// use (the latest when version is 0) and a write that moves the model
// config's stored version, on condition it is still the one read. A delete
// of the model config is conditional on the version it read before looking
// for variations that use it, so a reference landing meanwhile makes one of
// the two fail (409) instead of leaving a variation on a deleted model config.
func (s *Service) modelRef(ctx context.Context, projectKey, modelKey string, version int64, field string) (int64, store.Write, error) {
	m, err := s.GetModel(ctx, projectKey, modelKey)
	if fault.Is(err, fault.NotFound) {
		return 0, store.Write{}, fault.New(fault.Invalid, "field %q: model config %q does not exist in project %q", field+"modelConfigKey", modelKey, projectKey)
	}
	if err != nil {
		return 0, store.Write{}, err
	}
	if version == 0 {
		version = m.Version
	}
	if version < 1 || version > m.Version {
		return 0, store.Write{}, fault.New(fault.Invalid, "field %q: model config %q has no version %d (its latest is %d)", field+"modelConfigVersion", modelKey, version, m.Version)
	}
	data, err := encode(fmt.Sprintf("AI model config %q", modelKey), m)
	if err != nil {
		return 0, store.Write{}, err
	}
	k := store.AIModelConfigKey(projectKey, modelKey)
	return version, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: m.stored + 1, Data: data}, store.IfVersion(m.stored)), nil
}

// newVariation builds version 1 of a variation and the writes that store it.
func (s *Service) newVariation(ctx context.Context, projectKey, configKey string, in VariationInput, field string) (*Variation, []store.Write, error) {
	if len(in.ToolKeys) > 0 {
		return nil, nil, fault.New(fault.Invalid, "field %q is not supported: AI tools are not kept by this service; give tools with key and version", field+"toolKeys")
	}
	now := s.now().UnixMilli()
	v := &Variation{ID: uuid.NewString(), Key: in.Key, Name: in.Name, Description: in.Description, Instructions: in.Instructions,
		Comment: in.Comment, Version: 1, State: StatePublished, CreatedAt: now, PublishedAt: &now, Messages: in.Messages,
		Model: in.Model, ModelConfigKey: in.ModelConfigKey, JudgeConfiguration: in.JudgeConfiguration, Tools: in.Tools, OutputFormat: in.OutputFormat}
	if v.Messages == nil {
		v.Messages = []Message{}
	}
	if v.Model == nil {
		v.Model = map[string]any{}
	}
	if err := validVariation(v, field); err != nil {
		return nil, nil, err
	}
	var writes []store.Write
	if v.ModelConfigKey != "" {
		version, check, err := s.modelRef(ctx, projectKey, v.ModelConfigKey, 0, field)
		if err != nil {
			return nil, nil, err
		}
		v.ModelConfigVersion = version
		writes = append(writes, check)
	}
	put, err := v.putVersion(projectKey, configKey)
	if err != nil {
		return nil, nil, err
	}
	return v, append(writes, put), nil
}

// CreateVariation adds a variation to an AI Config.
func (s *Service) CreateVariation(ctx context.Context, projectKey, configKey string, in VariationInput) (*Variation, error) {
	c, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	if err := environment.ValidKey("key", in.Key); err != nil {
		return nil, err
	}
	existing, err := s.versions(ctx, projectKey, configKey, in.Key)
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, fault.New(fault.Conflict, "AI Config %q already has a variation %q", configKey, in.Key)
	}
	v, writes, err := s.newVariation(ctx, projectKey, configKey, in, "")
	if err != nil {
		return nil, err
	}
	writes = append(writes, store.Check(store.AIConfigKey(projectKey, configKey), store.IfExists()))
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "aiconfig", Resource: resource(projectKey, configKey), Actions: []string{"createAIConfigVariation"},
		Name: c.Name, Href: VariationHref(projectKey, configKey, v.Key), TitleVerb: "added a variation to the AI Config", Current: v,
		Conflict: fmt.Sprintf("AI Config %q or variation %q was changed by another request; read them again and retry", configKey, v.Key),
	}); err != nil {
		return nil, err
	}
	return v, nil
}

// versions returns every version of a variation, newest first; none when it does not exist.
func (s *Service) versions(ctx context.Context, projectKey, configKey, variationKey string) ([]*Variation, error) {
	if environment.ValidKey("variationKey", variationKey) != nil {
		return nil, nil
	}
	return record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.AIVariationPrefix(configKey, variationKey), Descending: true},
		fmt.Sprintf("versions of variation %q of AI Config %q", variationKey, configKey), decodeVariation)
}

// GetVariation returns every version of a variation, the latest first.
func (s *Service) GetVariation(ctx context.Context, projectKey, configKey, variationKey string) ([]*Variation, error) {
	if _, err := s.loadConfig(ctx, projectKey, configKey); err != nil {
		return nil, err
	}
	all, err := s.versions(ctx, projectKey, configKey, variationKey)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fault.New(fault.NotFound, "variation %q of AI Config %q not found", variationKey, configKey)
	}
	return all, nil
}

// reviewCheckOff marks a context whose variation change was reviewed.
type reviewCheckOff struct{}

// WithoutReviewCheck returns ctx for applying a change that an approval
// request carried through review: PatchVariationWith then skips the check
// that environments requiring review of AI Configs make. Only the approval
// lifecycle uses it.
func WithoutReviewCheck(ctx context.Context) context.Context {
	return context.WithValue(ctx, reviewCheckOff{}, true)
}

// ReviewPath is where a change refused for review goes.
const ReviewPath = "/api/v2/approval-requests"

// CheckVariationPatch reports whether p applies to the latest version of
// the variation as it is now (a 400 or 404 naming the problem), storing nothing.
func (s *Service) CheckVariationPatch(ctx context.Context, projectKey, configKey, variationKey string, p VariationPatch) error {
	all, err := s.GetVariation(ctx, projectKey, configKey, variationKey)
	if err != nil {
		return err
	}
	_, _, err = s.applyPatch(ctx, projectKey, all[0], p)
	return err
}

// PatchVariation applies the fields the body gives and stores the result as
// a new version of the variation (spec 4.12).
func (s *Service) PatchVariation(ctx context.Context, projectKey, configKey, variationKey string, p VariationPatch) (*Variation, error) {
	return s.PatchVariationWith(ctx, projectKey, configKey, variationKey, p)
}

// PatchVariationWith is PatchVariation committing extra writes in the same
// transaction (an approval request marked applied), so of two commits
// conditional on the same version only one lands (409 for the other).
func (s *Service) PatchVariationWith(ctx context.Context, projectKey, configKey, variationKey string, p VariationPatch, extra ...store.Write) (*Variation, error) {
	all, err := s.GetVariation(ctx, projectKey, configKey, variationKey)
	if err != nil {
		return nil, err
	}
	c, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return nil, err
	}
	old := all[0]
	next, modelWrite, err := s.applyPatch(ctx, projectKey, old, p)
	if err != nil {
		return nil, err
	}
	if off, _ := ctx.Value(reviewCheckOff{}).(bool); !off {
		if env, err := s.projects.ReviewRequired(ctx, projectKey); err != nil {
			return nil, err
		} else if env != "" {
			return nil, fault.New(fault.Forbidden, "environment %q requires review of AI Config changes: the variation was not changed; "+
				"create an approval request with POST %s, resourceId proj/%s:env/%s:aiconfig/%s and an updateAIConfigVariation instruction",
				env, ReviewPath, projectKey, env, configKey)
		}
	}
	writes := []store.Write{store.Check(store.AIConfigKey(projectKey, configKey), store.IfExists()),
		store.Check(store.AIVariationVersionKey(projectKey, configKey, variationKey, old.Version), store.IfExists())}
	if modelWrite != nil {
		writes = append(writes, *modelWrite)
	}
	put, err := next.putVersion(projectKey, configKey)
	if err != nil {
		return nil, err
	}
	delta, _ := json.Marshal(p)
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: append(append(writes, put), extra...), Kind: "aiconfig", Resource: resource(projectKey, configKey), Actions: []string{"updateAIConfigVariation"},
		Name: c.Name, Href: VariationHref(projectKey, configKey, variationKey), TitleVerb: "updated a variation of the AI Config",
		Comment: next.Comment, Previous: old, Current: next, Delta: delta,
		Conflict: fmt.Sprintf("variation %q of AI Config %q was changed by another request; read it again and retry", variationKey, configKey),
	}); err != nil {
		return nil, err
	}
	return next, nil
}

// applyPatch builds the next version of a variation from old and the patch.
func (s *Service) applyPatch(ctx context.Context, projectKey string, old *Variation, p VariationPatch) (*Variation, *store.Write, error) {
	if len(p.ToolKeys) > 0 {
		return nil, nil, fault.New(fault.Invalid, "field \"toolKeys\" is not supported: AI tools are not kept by this service; give tools with key and version")
	}
	if len(p.Skills) > 0 {
		return nil, nil, fault.New(fault.Invalid, "field \"skills\" is not supported: AI skills are not kept by this service")
	}
	next := *old
	next.ID = uuid.NewString()
	next.Version = old.Version + 1
	next.CreatedAt = s.now().UnixMilli()
	next.Comment = ""
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&next.Name, p.Name)
	set(&next.Description, p.Description)
	set(&next.Instructions, p.Instructions)
	set(&next.Comment, p.Comment)
	if p.Messages != nil {
		next.Messages = *p.Messages
		if next.Messages == nil {
			next.Messages = []Message{}
		}
	}
	if p.Model != nil {
		next.Model = p.Model
	}
	if p.JudgeConfiguration != nil {
		next.JudgeConfiguration = p.JudgeConfiguration
	}
	if p.Tools != nil {
		next.Tools = *p.Tools
	}
	if p.OutputFormat != nil {
		next.OutputFormat = p.OutputFormat
	}
	if err := s.applyState(&next, p); err != nil {
		return nil, nil, err
	}
	modelWrite, err := s.applyModel(ctx, projectKey, old, &next, p)
	if err != nil {
		return nil, nil, err
	}
	if err := validVariation(&next, ""); err != nil {
		return nil, nil, err
	}
	return &next, modelWrite, nil
}

func (s *Service) applyState(next *Variation, p VariationPatch) error {
	state := ""
	if p.State != nil {
		state = *p.State
		if state != StatePublished && state != StateArchived {
			return fault.New(fault.Invalid, "field \"state\" must be archived or published, not %q", state)
		}
	}
	if p.Published != nil {
		want := StateArchived
		if *p.Published {
			want = StatePublished
		}
		if state != "" && state != want {
			return fault.New(fault.Invalid, "fields \"state\" (%s) and \"published\" (%t) disagree", state, *p.Published)
		}
		state = want
	}
	if state == "" || state == next.State {
		return nil
	}
	now := next.CreatedAt
	next.State = state
	if state == StatePublished {
		next.PublishedAt = &now
	} else {
		next.ArchivedAt = &now
	}
	return nil
}

// applyModel follows spec 4.12: modelConfigVersion needs a model config
// key, in the patch or already set, and an existing version of it; a new
// key without a version takes that model config's latest version.
func (s *Service) applyModel(ctx context.Context, projectKey string, old, next *Variation, p VariationPatch) (*store.Write, error) {
	if p.ModelConfigKey != nil {
		next.ModelConfigKey = *p.ModelConfigKey
	}
	if p.ModelConfigVersion != nil && *p.ModelConfigVersion < 1 {
		return nil, fault.New(fault.Invalid, "field \"modelConfigVersion\" must be at least 1")
	}
	if next.ModelConfigKey == "" {
		if p.ModelConfigVersion != nil {
			return nil, fault.New(fault.Invalid, "field \"modelConfigVersion\" needs \"modelConfigKey\": give it in the same request, or set it on the variation first")
		}
		next.ModelConfigVersion = 0
		return nil, nil
	}
	var version int64
	switch {
	case p.ModelConfigVersion != nil:
		version = *p.ModelConfigVersion
	case next.ModelConfigKey != old.ModelConfigKey:
		version = 0 // the latest
	default:
		return nil, nil // unchanged
	}
	got, w, err := s.modelRef(ctx, projectKey, next.ModelConfigKey, version, "")
	if err != nil {
		return nil, err
	}
	next.ModelConfigVersion = got
	return &w, nil
}

// DeleteVariation removes a variation with every version of it.
func (s *Service) DeleteVariation(ctx context.Context, projectKey, configKey, variationKey string) error {
	all, err := s.GetVariation(ctx, projectKey, configKey, variationKey)
	if err != nil {
		return err
	}
	c, err := s.loadConfig(ctx, projectKey, configKey)
	if err != nil {
		return err
	}
	latest := all[0]
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.AIVariationVersionKey(projectKey, configKey, variationKey, latest.Version), store.IfExists()),
			store.Check(store.AIVariationVersionKey(projectKey, configKey, variationKey, latest.Version+1), store.IfNotExists())},
		Kind: "aiconfig", Resource: resource(projectKey, configKey), Actions: []string{"deleteAIConfigVariation"},
		Name: c.Name, Href: VariationHref(projectKey, configKey, variationKey), TitleVerb: "deleted a variation of the AI Config", Previous: latest,
		Conflict: fmt.Sprintf("variation %q of AI Config %q was changed by another request; try again", variationKey, configKey),
	}); err != nil {
		return err
	}
	for _, v := range all[1:] {
		if err := s.table.Delete(ctx, store.AIVariationVersionKey(projectKey, configKey, variationKey, v.Version), store.Cond{}); err != nil {
			return fmt.Errorf("remove version %d of variation %q: %w", v.Version, variationKey, err)
		}
	}
	return nil
}

// CreateModel stores a new model config at version 1.
func (s *Service) CreateModel(ctx context.Context, projectKey string, in ModelConfigInput) (*ModelConfig, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	if err := environment.ValidKey("key", in.Key); err != nil {
		return nil, err
	}
	if err := environment.ValidName("name", in.Name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.ID) == "" {
		return nil, fault.New(fault.Invalid, "field \"id\" is required")
	}
	if in.Tags == nil {
		in.Tags = []string{}
	}
	if err := environment.ValidTags("tags", in.Tags); err != nil {
		return nil, err
	}
	for name, cost := range map[string]*float64{"costPerInputToken": in.CostPerInputToken, "costPerOutputToken": in.CostPerOutputToken, "costPerCachedInputToken": in.CostPerCachedInputToken} {
		if cost != nil && *cost < 0 {
			return nil, fault.New(fault.Invalid, "field %q may not be negative", name)
		}
	}
	m := &ModelConfig{Key: in.Key, Name: in.Name, ID: in.ID, Icon: in.Icon, Provider: in.Provider, Params: in.Params, CustomParams: in.CustomParams,
		Tags: in.Tags, Version: 1, CostPerInputToken: in.CostPerInputToken, CostPerOutputToken: in.CostPerOutputToken, CostPerCachedInputToken: in.CostPerCachedInputToken,
		stored: 1}
	data, err := encode(fmt.Sprintf("AI model config %q", m.Key), m)
	if err != nil {
		return nil, err
	}
	k := store.AIModelConfigKey(projectKey, m.Key)
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.IfNotExists())},
		Kind:   "ai-model-config", Resource: modelResource(projectKey, m.Key), Actions: []string{"createAIModelConfig"},
		Name: m.Name, Href: ModelHref(projectKey, m.Key), TitleVerb: "created the AI model config", Current: m,
		Conflict: fmt.Sprintf("AI model config %q already exists in project %q", m.Key, projectKey),
	}); err != nil {
		return nil, conflictAsExists(err)
	}
	return m, nil
}

// GetModel returns one model config.
func (s *Service) GetModel(ctx context.Context, projectKey, modelKey string) (*ModelConfig, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	if environment.ValidKey("modelConfigKey", modelKey) != nil {
		return nil, fault.New(fault.NotFound, "AI model config %q not found in project %q", modelKey, projectKey)
	}
	return record.Load(ctx, s.table, store.AIModelConfigKey(projectKey, modelKey), fmt.Sprintf("AI model config %q in project %q", modelKey, projectKey), decodeModel)
}

// ListModels returns every model config of a project, by key.
func (s *Service) ListModels(ctx context.Context, projectKey string) ([]*ModelConfig, error) {
	if err := s.checkProject(ctx, projectKey); err != nil {
		return nil, err
	}
	out, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.AIModelConfigPrefix}, "AI model configs of project "+projectKey, decodeModel)
	if out == nil {
		out = []*ModelConfig{}
	}
	return out, err
}

// DeleteModel removes a model config. One that the latest version of a
// variation uses is refused (400 naming the variation): the variation
// would point at nothing. Older versions keep their reference as history.
func (s *Service) DeleteModel(ctx context.Context, projectKey, modelKey string) error {
	m, err := s.GetModel(ctx, projectKey, modelKey)
	if err != nil {
		return err
	}
	byConfig, err := s.variationsByConfig(ctx, projectKey)
	if err != nil {
		return err
	}
	for _, c := range slices.Sorted(maps.Keys(byConfig)) {
		for _, v := range latest(byConfig[c]) {
			if v.ModelConfigKey == modelKey {
				return fault.New(fault.Invalid, "AI model config %q is in use by variation %q of AI Config %q; point the variation at another model config first", modelKey, v.Key, c)
			}
		}
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.AIModelConfigKey(projectKey, modelKey), store.IfVersion(m.stored))},
		Kind:   "ai-model-config", Resource: modelResource(projectKey, modelKey), Actions: []string{"deleteAIModelConfig"},
		Name: m.Name, Href: ModelHref(projectKey, modelKey), TitleVerb: "deleted the AI model config", Previous: m,
		Conflict: fmt.Sprintf("AI model config %q was changed by another request (a variation may have started using it); try again", modelKey),
	})
	return err
}
