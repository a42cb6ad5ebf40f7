package sdkapi

import "github.com/flagplane/flagplane/shared/app"

// New is the sdk group: flag data for LaunchDarkly's SDKs, over the app's
// SDK data service, with its settings' heartbeat and streaming.
func New(a *app.App) app.Group {
	s := a.Settings()
	return app.Group{Name: "sdk", Handlers: Handlers(a.SDK, Options{Heartbeat: s.SDKHeartbeat, NoStreaming: s.NoSDKStreaming})}
}
