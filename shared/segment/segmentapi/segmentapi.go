// Package segmentapi serves the segments group: an environment's
// segments (list, create, read, JSON and semantic patch, delete), their
// expiring targets, and big segments' targets, imports, exports and
// membership reads.
package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/segment"
)

// New is the segments group over a.
func New(a *app.App) app.Group {
	h := handlers{segments: a.Services.Segments}
	ok := func(rep any) api.Answer { return api.Answer{Status: http.StatusOK, Rep: rep} }
	_ = ok
	return app.Group{
		Name: "segments",
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
		Needs:   map[string]api.Needs{},
		Answers: map[string]api.Answer{},
	}
}

// handlers serve the group's operations.
type handlers struct {
	segments *segment.Service
}
