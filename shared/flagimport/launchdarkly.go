package flagimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/segment"
)

// ldSource reads a project's flags from a LaunchDarkly-compatible REST API
// (LaunchDarkly, or another flagplane): the project's environments, then
// GET /api/v2/flags/{project} with summary=0 and every environment named
// (env=...), which carries their targets and rules, page by page; then each segment the rules match, environment by environment
// (GET /api/v2/segments/{project}/{environment}/{key}), and the segments
// those match in turn.
type ldSource struct {
	client  *http.Client
	base    string
	apiKey  string
	project string
}

// ldPageSize is the page size asked for; LaunchDarkly allows up to 100.
const ldPageSize = 100

// ldFlag is the part of LaunchDarkly's FeatureFlag an import reads. Its
// environments decode straight into flagplane's targeting, which follows
// LaunchDarkly's field names.
type ldFlag struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Variations  []struct {
		Value       json.RawMessage `json:"value"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
	} `json:"variations"`
	Defaults     *flag.Defaults             `json:"defaults"`
	Tags         []string                   `json:"tags"`
	Temporary    *bool                      `json:"temporary"`
	Archived     bool                       `json:"archived"`
	Environments map[string]*flag.EnvConfig `json:"environments"`
}

type ldPage struct {
	Items      []ldFlag `json:"items"`
	TotalCount int      `json:"totalCount"`
}

func (s *ldSource) Flags(ctx context.Context) ([]SourceFlag, []SourceSegment, error) {
	flags, err := s.flags(ctx)
	if err != nil {
		return nil, nil, err
	}
	segs, err := s.segments(ctx, flags)
	if err != nil {
		return nil, nil, err
	}
	return flags, segs, nil
}

// environments lists the keys of the source project's environments
// (GET /api/v2/projects/{project}/environments, page by page).
func (s *ldSource) environments(ctx context.Context) ([]string, error) {
	headers := map[string]string{"Authorization": s.apiKey}
	var keys []string
	for offset := 0; ; {
		var page struct {
			Items []struct {
				Key string `json:"key"`
			} `json:"items"`
			TotalCount int `json:"totalCount"`
		}
		path := fmt.Sprintf("/api/v2/projects/%s/environments?limit=%d&offset=%d", url.PathEscape(s.project), ldPageSize, offset)
		if err := getJSON(ctx, s.client, s.base, path, headers, &page); err != nil {
			return nil, err
		}
		for _, e := range page.Items {
			keys = append(keys, e.Key)
		}
		offset += len(page.Items)
		if len(page.Items) == 0 || offset >= page.TotalCount {
			return keys, nil
		}
	}
}

func (s *ldSource) flags(ctx context.Context) ([]SourceFlag, error) {
	// A flag list carries environments' targeting only for the environments
	// named with env (and summary=0), as LaunchDarkly's API answers since
	// its version 20240415: name them all.
	envs, err := s.environments(ctx)
	if err != nil {
		return nil, err
	}
	envQuery := ""
	for _, k := range envs {
		envQuery += "&env=" + url.QueryEscape(k)
	}
	headers := map[string]string{"Authorization": s.apiKey}
	var out []SourceFlag
	for offset := 0; ; {
		var page ldPage
		path := fmt.Sprintf("/api/v2/flags/%s?summary=0&limit=%d&offset=%d%s", url.PathEscape(s.project), ldPageSize, offset, envQuery)
		if err := getJSON(ctx, s.client, s.base, path, headers, &page); err != nil {
			return nil, err
		}
		for _, f := range page.Items {
			if !f.Archived {
				out = append(out, fromLD(f))
			}
		}
		offset += len(page.Items)
		if len(out) > MaxFlagsPerRun {
			return nil, &SourceError{Status: 413, Message: fmt.Sprintf("project %q of the source holds more than %d flags, the most one configuration imports", s.project, MaxFlagsPerRun)}
		}
		if len(page.Items) == 0 || offset >= page.TotalCount {
			return out, nil
		}
	}
}

// fromLD maps a LaunchDarkly flag: variations, defaults, tags, and every
// environment's on/off, targets, rules, default rule, off variation and
// prerequisites.
func fromLD(f ldFlag) SourceFlag {
	sf := SourceFlag{Key: f.Key, Name: f.Name, Description: f.Description, Defaults: f.Defaults, Tags: f.Tags,
		Temporary: f.Temporary, Envs: map[string]*flag.EnvConfig{}}
	for _, v := range f.Variations {
		sf.Variations = append(sf.Variations, flag.VariationInput{Value: v.Value, Name: v.Name, Description: v.Description})
	}
	for k, e := range f.Environments {
		if e == nil {
			continue
		}
		// Only the targeting is the source's; versions, salt and the rest stay flagplane's own.
		sf.Envs[k] = &flag.EnvConfig{On: e.On, Targets: e.Targets, ContextTargets: e.ContextTargets, Rules: e.Rules,
			Fallthrough: e.Fallthrough, OffVariation: e.OffVariation, Prerequisites: e.Prerequisites}
	}
	return sf
}

// MaxSegmentsPerRun bounds the segments one run reads from a source.
const MaxSegmentsPerRun = 1000

// segments reads every segment the flags' rules match, and those their
// rules match, once per environment. A segment the source does not have,
// or a big segment (whose members its API does not list), is a Problem.
func (s *ldSource) segments(ctx context.Context, flags []SourceFlag) ([]SourceSegment, error) {
	headers := map[string]string{"Authorization": s.apiKey}
	type ref struct{ env, key string }
	var queue []ref
	seen := map[ref]bool{}
	want := func(env string, keys []string) {
		for _, k := range keys {
			if r := (ref{env, k}); !seen[r] {
				seen[r] = true
				queue = append(queue, r)
			}
		}
	}
	for _, sf := range flags {
		for _, env := range slices.Sorted(maps.Keys(sf.Envs)) {
			want(env, segmentsUsed(sf, env))
		}
	}
	var out []SourceSegment
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if len(out) >= MaxSegmentsPerRun {
			return nil, &SourceError{Status: 413, Message: fmt.Sprintf("the flags of project %q of the source match more than %d segments, the most one configuration imports", s.project, MaxSegmentsPerRun)}
		}
		// LaunchDarkly's UserSegment decodes straight into flagplane's
		// segment, which follows its names; only the targeting is read.
		var sg segment.Segment
		path := fmt.Sprintf("/api/v2/segments/%s/%s/%s", url.PathEscape(s.project), url.PathEscape(r.env), url.PathEscape(r.key))
		err := getJSON(ctx, s.client, s.base, path, headers, &sg)
		var se *SourceError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			out = append(out, SourceSegment{Env: r.env, Key: r.key, Problem: fmt.Sprintf("the source has no segment %q in environment %q", r.key, r.env)})
			continue
		}
		if err != nil {
			return nil, err
		}
		ss := SourceSegment{Env: r.env, Key: r.key, Name: sg.Name, Description: sg.Description, Tags: sg.Tags,
			Included: sg.Included, Excluded: sg.Excluded, IncludedContexts: sg.IncludedContexts, ExcludedContexts: sg.ExcludedContexts, Rules: sg.Rules}
		if sg.Unbounded {
			ss.Problem = fmt.Sprintf("segment %q of environment %q is a big segment, whose members the source's API does not list", r.key, r.env)
		}
		out = append(out, ss)
		want(r.env, sg.SegmentsUsed())
	}
	return out, nil
}
