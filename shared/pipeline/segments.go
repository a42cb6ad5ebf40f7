package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// SegmentUsers names what keeps segment segmentKey of environment envKey
// in use: the pipelines with an audience naming it, and the flags whose
// active release does (a release copies its pipeline's audiences, so it
// keeps naming the segment after the pipeline drops it). A completed
// release is history and keeps nothing in use. Both lists are in key order.
func SegmentUsers(ctx context.Context, table store.Table, projectKey, envKey, segmentKey string) (pipelines, releases []string, err error) {
	all, err := record.All(ctx, table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ReleasePipelineSKPrefix},
		fmt.Sprintf("release pipelines of project %q", projectKey), decode)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range all {
		for _, ph := range p.Phases {
			if namesSegment(ph.Audiences, envKey, segmentKey) && !slices.Contains(pipelines, p.Key) {
				pipelines = append(pipelines, p.Key)
			}
		}
	}
	rels, err := record.All(ctx, table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ReleaseSKPrefix},
		fmt.Sprintf("releases of project %q", projectKey), decodeRelease)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rels {
		if r.ActivePhase() == "" {
			continue
		}
		for _, ph := range r.Phases {
			audiences := make([]Audience, len(ph.Audiences))
			for i, a := range ph.Audiences {
				audiences[i] = a.Audience
			}
			if namesSegment(audiences, envKey, segmentKey) && !slices.Contains(releases, r.FlagKey) {
				releases = append(releases, r.FlagKey)
			}
		}
	}
	slices.Sort(pipelines)
	slices.Sort(releases)
	return pipelines, releases, nil
}

func namesSegment(audiences []Audience, envKey, segmentKey string) bool {
	for _, a := range audiences {
		if a.EnvironmentKey == envKey && slices.Contains(a.SegmentKeys, segmentKey) {
			return true
		}
	}
	return false
}
