// Package endpoints adapts the domain services to HTTP: one handler per
// catalog operation, keyed by operation id, and the JSON representations
// clients see.
package endpoints

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// Needs returns, by operation id, the rights each operation needs when
// they follow from the request rather than from the catalog alone: the
// paths of a JSON patch, the instructions of a semantic patch and the
// environment they act in, the flag and environment of an approval request.
func Needs(s app.Services) map[string]api.Needs {
	return map[string]api.Needs{}
}

// Handlers returns every built operation's handler, by operation id.
func Handlers(s app.Services) map[string]api.Handler {
	h := map[string]api.Handler{}
	for id, fn := range aiConfigHandlers(s) {
		h[id] = fn
	}
	return h
}
