// Package integrationapi serves the integrations group over HTTP.
package integrationapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Registered with no handlers yet: every operation answers 501 until built.
func init() {
	app.Register(app.Group{Name: "integrations", Handlers: func(*app.App) map[string]api.Handler { return nil }})
}
