package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/segment"
)

// tagger reads the stored tags of projects, environments, flags and
// segments for tag-selecting statements.
type tagger struct{ s Services }

func (t tagger) Tags(ctx context.Context, res policy.Resource) (policy.Resource, error) {
	var projectKey, envKey string
	var out policy.Resource
	for i, seg := range res.Segments() {
		tags := seg.Tags // a create's own tags, from its body
		stored, err := t.stored(ctx, seg, projectKey, envKey)
		if err != nil {
			return res, err
		}
		tags = append(slices.Clip(tags), stored...)
		switch seg.Kind {
		case "proj":
			projectKey = seg.Key
		case "env":
			envKey = seg.Key
		}
		if i == 0 {
			out = policy.NewResource(seg.Kind, seg.Key, tags...)
		} else {
			out = out.Child(seg.Kind, seg.Key, tags...)
		}
	}
	return out, nil
}

// stored returns the tags of the project, environment, flag or segment
// seg names, none for a wildcard key, another kind, or a resource that
// does not exist.
func (t tagger) stored(ctx context.Context, seg policy.ResourceSegment, projectKey, envKey string) ([]string, error) {
	if seg.Key == "*" || seg.Key == "" {
		return nil, nil
	}
	var tags []string
	var err error
	switch {
	case seg.Kind == "proj":
		var p *project.Project
		if p, err = t.s.Projects.Get(ctx, seg.Key); err == nil {
			tags = p.Tags
		}
	case seg.Kind == "env" && projectKey != "" && projectKey != "*":
		var e *environment.Environment
		if e, err = t.s.Environments.Get(ctx, projectKey, seg.Key); err == nil {
			tags = e.Tags
		}
	case seg.Kind == "flag" && projectKey != "" && projectKey != "*":
		var f *flag.Flag
		if f, err = t.s.Flags.Load(ctx, projectKey, seg.Key); err == nil {
			tags = f.Tags
		}
	case seg.Kind == "segment" && concrete(projectKey) && concrete(envKey):
		var s *segment.Segment
		if s, err = t.s.Segments.Get(ctx, projectKey, envKey, seg.Key); err == nil {
			tags = s.Tags
		}
	default:
		return nil, nil
	}
	if err != nil && !fault.Is(err, fault.NotFound) {
		return nil, fmt.Errorf("load tags of %s/%s: %w", seg.Kind, seg.Key, err)
	}
	return tags, nil
}

// concrete reports whether a key of a resource names one resource.
func concrete(key string) bool { return key != "" && key != "*" }
