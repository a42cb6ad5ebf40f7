package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/webhook"
)

// A Group is one resource group of the catalog, built over the wired app
// by its package's New: the package holds the group's handlers, needs,
// representations and tests. Whoever runs groups names them: each
// function's main its own, the local server and the test server the
// explicit list of package allgroups. A Lambda function links only the
// groups its main names.
type Group struct {
	// Name is the catalog group the handlers serve.
	Name string
	// Handlers are the group's built operations, by operation id.
	Handlers map[string]api.Handler
	// Needs, optional, are the rights that follow from a request's body or
	// stored state rather than from the catalog alone (see api.Needs).
	Needs map[string]api.Needs
	// Answers are the built operations' success answers, by operation id,
	// from which the OpenAPI document describes them.
	Answers map[string]api.Answer
	// Examples are successful calls of the built operations, made by the
	// tests on a world holding one of every resource (see apptest).
	Examples example.Set
	// Workers, optional, are the group's scheduled work: a scheduled
	// function each in AWS, a timer each in the local server.
	Workers []Worker
	// Consumers, optional, read the outbox beside webhooks: the delivery
	// worker (the webhook-delivery function in AWS, whose main names the
	// group; the in-process queue locally) hands each of them every
	// committed entry, with the queue's retries and dead letters.
	Consumers []webhook.Consumer
}

// A Worker is work a group has done on a schedule.
type Worker struct {
	// Name is the work's name: its scheduled function's in AWS.
	Name string
	// Every is how often the local server runs it (first at start).
	Every time.Duration
	// Run does the work once.
	Run func(ctx context.Context, logger *slog.Logger) error
}

// NewGroup builds a group over the wired app; each group package exports
// one, named New.
type NewGroup func(a *App) Group

// Groups returns the app's groups, built once, in the order given to New.
// A group the catalog does not have, given twice, or with no handlers is a
// programming error and panics at start.
func (a *App) Groups() []Group {
	a.groupsOnce.Do(func() {
		seen := map[string]bool{}
		for _, build := range a.newGroups {
			g := build(a)
			if _, err := catalog.Group(g.Name); err != nil {
				panic(fmt.Sprintf("app: %v", err))
			}
			if len(g.Handlers) == 0 {
				panic(fmt.Sprintf("app: group %q has no handlers", g.Name))
			}
			for _, w := range g.Workers {
				if w.Name == "" || w.Every <= 0 || w.Run == nil {
					panic(fmt.Sprintf("app: group %q has a worker without a name, a period or work", g.Name))
				}
			}
			if seen[g.Name] {
				panic(fmt.Sprintf("app: group %q given twice", g.Name))
			}
			seen[g.Name] = true
			a.groups = append(a.groups, g)
		}
	})
	return a.groups
}

// RunWorkers runs every group's workers, at once and then each Every,
// until ctx ends, and returns when they all have. A failed run is logged;
// the next one retries.
func (a *App) RunWorkers(ctx context.Context, logger *slog.Logger) {
	var wg sync.WaitGroup
	for _, g := range a.Groups() {
		for _, w := range g.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(w.Every)
				defer tick.Stop()
				for {
					if err := w.Run(ctx, logger); err != nil && ctx.Err() == nil {
						logger.Warn("scheduled work failed; the next run retries", "worker", w.Name, "err", err.Error())
					}
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
				}
			}()
		}
	}
	wg.Wait()
}

// CheckWorker fails unless a group of the app has the named worker.
func (a *App) CheckWorker(name string) error {
	_, err := a.worker(name)
	return err
}

// RunWorker runs the named worker of any group once (tests: as if its
// time had come).
func (a *App) RunWorker(ctx context.Context, name string, logger *slog.Logger) error {
	w, err := a.worker(name)
	if err != nil {
		return err
	}
	return w.Run(ctx, logger)
}

func (a *App) worker(name string) (Worker, error) {
	for _, g := range a.Groups() {
		for _, w := range g.Workers {
			if w.Name == name {
				return w, nil
			}
		}
	}
	return Worker{}, fmt.Errorf("no group of this app has the worker %q", name)
}
