// Package endpoints adapts the domain services to HTTP: one handler per
// catalog operation, keyed by operation id, and the JSON representations
// clients see.
package endpoints

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/project"
)

// Services are the domain services the handlers call.
type Services struct {
	Projects     *project.Service
	Environments *environment.Service
	Audit        *audit.Log
}

// Handlers returns every built operation's handler, by operation id.
func Handlers(s Services) map[string]api.Handler {
	h := map[string]api.Handler{}
	for _, part := range []map[string]api.Handler{projectHandlers(s), environmentHandlers(s), auditHandlers(s)} {
		for id, fn := range part {
			h[id] = fn
		}
	}
	return h
}
