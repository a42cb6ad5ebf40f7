package sdkapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/ofrep"
)

// New is the sdk group: flag data for LaunchDarkly's SDKs, over the app's
// SDK data service, with its settings' heartbeat and streaming.
func New(a *app.App) app.Group {
	s := a.Settings()
	return app.Group{Name: "sdk", Handlers: Handlers(a.SDK, Options{Heartbeat: s.SDKHeartbeat, NoStreaming: s.NoSDKStreaming}), Answers: Answers()}
}

// Answers describe the group's operations whose answers are JSON of
// flagplane's own, for the OpenAPI document; LaunchDarkly's SDK payloads
// are left undescribed.
func Answers() map[string]api.Answer {
	return map[string]api.Answer{
		OpOFREPFlag:  {Status: http.StatusOK, Rep: ofrep.Evaluation{}, Error: OFREPErrorBody{}},
		OpOFREPFlags: {Status: http.StatusOK, Rep: ofrep.Bulk{}, ETag: true, Error: OFREPErrorBody{}},
	}
}
