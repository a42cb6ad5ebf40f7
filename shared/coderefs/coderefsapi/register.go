// Package coderefsapi serves the code-refs group over HTTP.
package coderefsapi

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Registered with no handlers yet: every operation answers 501 until built.
func init() {
	app.Register(app.Group{Name: "code-refs", Handlers: func(*app.App) map[string]api.Handler { return nil }})
}
