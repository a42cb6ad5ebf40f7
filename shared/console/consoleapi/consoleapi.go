// Package consoleapi is the catalog's console group: the web console's
// page at "/" and its files under /console/, served from the binary
// (package console) through the router like every operation, so the local
// server and the stack (the console function behind API Gateway) serve it
// alike. The operations are public: the page and its files are the same
// for everyone, and the page then calls the API with the token it is given.
package consoleapi

import (
	"io/fs"
	"net/http"
	"path"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/console"
	"github.com/flagplane/flagplane/shared/fault"
)

// Group is the catalog group's name.
const Group = "console"

// dirs are the file tree's folders, by the operation that serves each:
// the router has no greedy parameter, so each depth has its route.
var dirs = map[string]string{
	"getConsoleFile":       "",
	"getConsoleScript":     "js",
	"getConsolePageScript": "js/pages",
}

// New builds the group; it needs nothing of the app.
func New(*app.App) app.Group {
	handlers := map[string]api.Handler{
		"getConsolePage": func(w http.ResponseWriter, r *http.Request) error {
			console.Serve(w, r, "index.html")
			return nil
		},
	}
	for id, dir := range dirs {
		handlers[id] = file(dir)
	}
	return app.Group{Name: Group, Handlers: handlers}
}

// file serves the file named by the path's {file} in dir. The page is
// served at "/" only, and a folder or a name the tree lacks is the API's
// JSON 404, as any unknown path.
func file(dir string) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := path.Join(dir, r.PathValue("file"))
		if info, err := fs.Stat(console.Files(), name); err != nil || info.IsDir() || name == "index.html" {
			return fault.New(fault.NotFound, "the console has no file %s", console.Prefix+name)
		}
		console.Serve(w, r, name)
		return nil
	}
}
