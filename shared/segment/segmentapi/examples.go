package segmentapi

import (
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/segment"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			// segments.go
			"getSegments": func(w *example.World) example.Call {
				exampleSegment(w, "listed", false)
				exampleSegment(w, "listed-big", true)
				return example.Get(segment.CollectionHref(w.Project, "production"))
			},
			"postSegment": func(w *example.World) example.Call {
				return example.Post(segment.CollectionHref(w.Project, "production"),
					map[string]any{"key": w.Unique("segment"), "name": "Beta testers", "description": "early access", "tags": []string{"beta"}})
			},
			"getSegment": func(w *example.World) example.Call {
				key := exampleSegment(w, "used", false)
				flagKey := w.Unique("segment-flag")
				w.Must(http.StatusCreated, http.MethodPost, example.FlagsPath(w.Project), map[string]any{"key": flagKey, "name": "Uses a segment"})
				w.Must(http.StatusOK, http.MethodPatch, example.FlagPath(w.Project, flagKey), []example.Op{example.Add("/environments/production/rules/-",
					map[string]any{"variation": 0, "clauses": []map[string]any{{"attribute": "segmentMatch", "op": "segmentMatch", "values": []string{key}}}})})
				return example.Get(segment.Href(w.Project, "production", key))
			},
			"patchSegment": func(w *example.World) example.Call {
				key := exampleSegment(w, "patched", false)
				return example.Patch(segment.Href(w.Project, "production", key), example.Replace("/description", "patched"),
					example.Add("/included/-", "user-2"))
			},
			"deleteSegment": func(w *example.World) example.Call {
				return example.Get(segment.Href(w.Project, "production", exampleSegment(w, "doomed", false)))
			},
			// expiring.go
			"getExpiringTargetsForSegment": func(w *example.World) example.Call {
				return example.Get(expiring.SegmentHref(w.Project, "production", expiringSegment(w)))
			},
			"getExpiringUserTargetsForSegment": func(w *example.World) example.Call {
				return example.Get(expiringUserPath(w.Project, "production", expiringSegment(w)))
			},
			"patchExpiringTargetsForSegment": func(w *example.World) example.Call {
				return example.Semantic(expiring.SegmentHref(w.Project, "production", exampleSegment(w, "expiring", false)),
					example.Instr("addExpiringTarget", "targetType", "included", "contextKind", "user", "contextKey", "user-1", "value", inAnHour()))
			},
			"patchExpiringUserTargetsForSegment": func(w *example.World) example.Call {
				return example.Semantic(expiringUserPath(w.Project, "production", expiringSegment(w)),
					example.Instr("updateExpireUserTargetDate", "targetType", "included", "userKey", "user-1", "value", inAnHour()+1))
			},
		},
	}
}

// exampleSegment creates a segment of production, with an included user
// and a rule, or a big one, and returns its key.
func exampleSegment(w *example.World, prefix string, big bool) string {
	key := w.Unique(prefix)
	body := map[string]any{"key": key, "name": "Segment " + key, "tags": []string{"example"}}
	if big {
		body["unbounded"], body["unboundedContextKind"] = true, "user"
	}
	path := segment.CollectionHref(w.Project, "production")
	w.Must(http.StatusCreated, http.MethodPost, path, body)
	if !big {
		w.Must(http.StatusOK, http.MethodPatch, segment.Href(w.Project, "production", key), []example.Op{
			example.Add("/included/-", "user-1"),
			example.Add("/rules/-", map[string]any{"_id": "rule-1", "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}}}}),
		})
	}
	return key
}

// expiringSegment is an exampleSegment whose included user-1 is
// scheduled for removal in an hour.
func expiringSegment(w *example.World) string {
	key := exampleSegment(w, "expiring", false)
	w.Must(http.StatusOK, http.MethodPatch, expiring.SegmentHref(w.Project, "production", key), map[string]any{"instructions": []any{
		example.Instr("addExpiringTarget", "targetType", "included", "contextKind", "user", "contextKey", "user-1", "value", inAnHour())}},
		"Content-Type", example.SemanticType)
	return key
}

func inAnHour() int64 { return time.Now().Add(time.Hour).UnixMilli() }
