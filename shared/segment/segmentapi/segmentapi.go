// Package segmentapi serves the segments group: an environment's
// segments (list, create, read, JSON and semantic patch, delete), their
// expiring targets, and big segments' targets, imports, exports and
// membership reads.
package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/segment"
)

// New is the segments group over a.
func New(a *app.App) app.Group {
	h := handlers{segments: a.Services.Segments, envs: a.Services.Environments, expiring: a.Services.Expiring}
	ok := func(rep any) api.Answer { return api.Answer{Status: http.StatusOK, Rep: rep} }
	// withBig: the big segment operations' entries (bigexamples.go).
	return withBig(app.Group{
		Name:     "segments",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			// segments.go
			"getSegments":   h.getSegments,
			"postSegment":   h.postSegment,
			"getSegment":    h.getSegment,
			"patchSegment":  h.patchSegment,
			"deleteSegment": h.deleteSegment,
			// bigsegments.go
			"updateBigSegmentContextTargets":            h.updateBigSegmentContextTargets,
			"getSegmentMembershipForContext":            h.getSegmentMembershipForContext,
			"createBigSegmentExport":                    h.createBigSegmentExport,
			"getBigSegmentExport":                       h.getBigSegmentExport,
			"createBigSegmentImport":                    h.createBigSegmentImport,
			"getBigSegmentImport":                       h.getBigSegmentImport,
			"updateBigSegmentTargets":                   h.updateBigSegmentTargets,
			"getSegmentMembershipForUser":               h.getSegmentMembershipForUser,
			"getContextInstanceSegmentsMembershipByEnv": h.getContextInstanceSegmentsMembershipByEnv,
			// expiring.go
			"getExpiringTargetsForSegment":       h.getExpiringTargetsForSegment,
			"patchExpiringTargetsForSegment":     h.patchExpiringTargetsForSegment,
			"getExpiringUserTargetsForSegment":   h.getExpiringUserTargetsForSegment,
			"patchExpiringUserTargetsForSegment": h.patchExpiringUserTargetsForSegment,
		},
		Needs: map[string]api.Needs{
			// segments.go
			"patchSegment": patchNeeds,
		},
		Answers: map[string]api.Answer{
			// segments.go
			"getSegments":   ok(segmentsRep{}),
			"postSegment":   {Status: http.StatusCreated, Rep: segmentRep{}},
			"getSegment":    ok(segmentRep{}),
			"patchSegment":  ok(segmentRep{}),
			"deleteSegment": {Status: http.StatusNoContent},
			// expiring.go
			"getExpiringTargetsForSegment":       ok(expiringTargetsRep{}),
			"patchExpiringTargetsForSegment":     ok(expiringTargetsPatchRep{}),
			"getExpiringUserTargetsForSegment":   ok(expiringUserTargetsRep{}),
			"patchExpiringUserTargetsForSegment": ok(expiringUserTargetsPatchRep{}),
		},
	}, a.Services.Segments)
}

// handlers serve the group's operations.
type handlers struct {
	segments *segment.Service
	// envs name a missing environment, and a big segment's envId.
	envs *environment.Service
	// expiring schedules removals from segments' targets.
	expiring *expiring.Service
}
