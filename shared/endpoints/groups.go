package endpoints

import (
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/catalog"
)

// The groups this package still serves, each built over the wired app.
var (
	AIConfigs = group("ai-configs")
)

// group picks the named catalog group's operations out of this package's.
func group(name string) app.NewGroup {
	return func(a *app.App) app.Group {
		ops, err := catalog.Group(name)
		if err != nil {
			panic(err)
		}
		handlers, needs := Handlers(a.Services), Needs(a.Services)
		g := app.Group{Name: name, Handlers: map[string]api.Handler{}, Needs: map[string]api.Needs{}, Answers: map[string]api.Answer{}}
		for _, op := range ops {
			if h, ok := handlers[op.ID]; ok {
				g.Handlers[op.ID] = h
			}
			if n, ok := needs[op.ID]; ok {
				g.Needs[op.ID] = n
			}
		}
		return g
	}
}
