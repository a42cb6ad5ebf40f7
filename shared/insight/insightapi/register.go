// Package insightapi serves the insights group over HTTP.
package insightapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Registered with no handlers yet: every operation answers 501 until built.
func init() {
	app.Register(app.Group{Name: "insights", Handlers: func(*app.App) map[string]api.Handler { return nil }})
}
