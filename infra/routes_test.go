package infra

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRoutes(t *testing.T) {
	routes := Routes()
	t.Run("every route key is unique", func(t *testing.T) {
		seen := map[string]bool{}
		for _, r := range routes {
			if seen[r.Key] {
				t.Fatalf("route %q twice", r.Key)
			}
			seen[r.Key] = true
		}
	})
	t.Run("the routes fit in one HTTP API", func(t *testing.T) {
		if len(routes) > MaxRoutes {
			t.Fatalf("%d routes, API Gateway allows %d", len(routes), MaxRoutes)
		}
	})
	t.Run("every function has a main package under functions", func(t *testing.T) {
		for _, f := range Functions() {
			if _, err := os.Stat(filepath.Join("..", "functions", f, "main.go")); err != nil {
				t.Errorf("function %q: %v", f, err)
			}
		}
	})
	t.Run("every function folder is a catalog group, a listed worker or the local binary", func(t *testing.T) {
		groups := map[string]bool{"flagplane": true}
		for _, f := range Functions() {
			groups[f] = true
		}
		// A new worker needs one entry in the worker list (functions.go) to deploy.
		for _, w := range Workers() {
			groups[w.Name] = true
		}
		entries, err := os.ReadDir(filepath.Join("..", "functions"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !groups[e.Name()] {
				t.Errorf("functions/%s is neither a catalog group nor listed in infra.workers", e.Name())
			}
		}
	})
}
