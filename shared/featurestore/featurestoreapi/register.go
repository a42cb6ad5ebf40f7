// Package featurestoreapi serves the delivery-configurations and big-segments groups over HTTP.
package featurestoreapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Registered with no handlers yet: every operation answers 501 until built.
func init() {
	app.Register(app.Group{Name: "delivery-configurations", Handlers: func(*app.App) map[string]api.Handler { return nil }})
	app.Register(app.Group{Name: "big-segments", Handlers: func(*app.App) map[string]api.Handler { return nil }})
}
