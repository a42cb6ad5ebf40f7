package allgroups_test

import (
	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The usage group's rows in the cross-cutting tables: every operation is a
// GET with the beta header. The world's project gets one SDK payload, so
// the SDK version lists (after a rollup's snapshot) and evaluation series
// answer with items.

func init() {
	timestampTable = append(timestampTable, timestampRow{
		resource: "usage series", source: "spec 2.23: a point's time is Unix ms, an integer",
		reads: []timestampRead{
			tsGet(func(*apptest.World) string { return api + "/usage/total-contexts?groupBy=sdkName" }),
			tsGet(func(*apptest.World) string { return api + "/usage/ai-runs?granularity=hourly" }),
			tsGet(func(w *apptest.World) string {
				return api + "/usage/evaluations/" + w.Project + "/production/" + w.Flag + "?from=1699000000000&to=1700100000000"
			}),
		},
		fields: []timestampField{tsInteger("series[].time")},
	})
}
