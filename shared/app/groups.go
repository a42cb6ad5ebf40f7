package app

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/webhook"
)

// A Group is a resource group whose handlers live in a package of their
// own (shared/<domain>/<domain>api) and register themselves from its init.
// A Lambda function links only the group packages its main imports, so each
// new group adds to its own bootstrap and no other; the local server and
// the test server link them all through package allgroups. Package
// endpoints holds the groups built before this registry.
type Group struct {
	// Name is the catalog group the handlers serve.
	Name string
	// Handlers builds the group's handlers, by operation id, over the wired app.
	Handlers func(a *App) map[string]api.Handler
	// Needs, optional, are the rights that follow from a request's body or
	// stored state rather than from the catalog alone (see api.Needs).
	Needs func(a *App) map[string]api.Needs
	// Jobs, optional, runs in the local server's background until ctx ends:
	// the timers that stand in for the group's scheduled functions in AWS.
	Jobs func(ctx context.Context, a *App, logger *slog.Logger)
	// Consumers, optional, read the outbox beside webhooks: the delivery
	// worker (the webhook-delivery function in AWS, whose main must import
	// the group's package; the in-process queue locally) hands each of them
	// every committed entry, with the queue's retries and dead letters.
	Consumers func(a *App) []webhook.Consumer
}

var (
	groupsMu sync.Mutex
	groups   = map[string]Group{}
)

// Register adds a group; a package's init calls it. A name the catalog does
// not have, or registered twice, is a programming error and panics at start.
func Register(g Group) {
	if _, err := catalog.Group(g.Name); err != nil {
		panic(fmt.Sprintf("app.Register: %v", err))
	}
	if g.Handlers == nil {
		panic(fmt.Sprintf("app.Register: group %q has no handlers", g.Name))
	}
	groupsMu.Lock()
	defer groupsMu.Unlock()
	if _, dup := groups[g.Name]; dup {
		panic(fmt.Sprintf("app.Register: group %q registered twice", g.Name))
	}
	groups[g.Name] = g
}

// Registered returns the registered groups in name order.
func Registered() []Group {
	groupsMu.Lock()
	defer groupsMu.Unlock()
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Shared returns the value build makes for key, built once per App: the
// service a registered group's handlers, needs and jobs share (its caches
// among them). key is best a group-private type, as with context keys.
// build may call Shared for other keys (a service built on another
// group's); the lock is not held while it runs.
func (a *App) Shared(key any, build func() any) any {
	a.sharedMu.Lock()
	if a.shared == nil {
		a.shared = map[any]*sharedValue{}
	}
	sv, ok := a.shared[key]
	if !ok {
		sv = &sharedValue{}
		a.shared[key] = sv
	}
	a.sharedMu.Unlock()
	sv.once.Do(func() { sv.v = build() })
	return sv.v
}

type sharedValue struct {
	once sync.Once
	v    any
}

// RunJobs runs every registered group's background jobs until ctx ends,
// and returns when they all have.
func (a *App) RunJobs(ctx context.Context, logger *slog.Logger) {
	var wg sync.WaitGroup
	for _, g := range Registered() {
		if g.Jobs == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Jobs(ctx, a, logger)
		}()
	}
	wg.Wait()
}
