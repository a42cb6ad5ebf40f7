// Package usageapi serves the usage group over HTTP.
package usageapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Registered with no handlers yet: every operation answers 501 until built.
func init() {
	app.Register(app.Group{Name: "usage", Handlers: func(*app.App) map[string]api.Handler { return nil }})
}
