package flagimportapi

import (
	"net/http"
	"sync"

	"github.com/flagplane/flagplane/shared/example"
)

// The examples import the world project's flags from the world server
// itself (its LaunchDarkly-compatible API; the test server may reach
// loopback) into a project of their own.
const (
	examplesPath  = "/api/v2/integration-capabilities/flag-import"
	exampleTarget = "imports"
)

// exampleImports are each world's configuration path (by the world
// server's URL), made and run once, so its _status has a lastImport.
var exampleImports sync.Map

func exampleBody(w *example.World, name string) map[string]any {
	return map[string]any{"name": name, "tags": []string{"migration"}, "config": map[string]any{
		"baseUrl": w.URL, "apiKey": w.Token, "sourceProjectKey": w.Project, "ldTag": "imported"}}
}

// exampleImport returns the world's configuration path, creating it on first use.
func exampleImport(w *example.World) string {
	if p, ok := exampleImports.Load(w.URL); ok {
		return p.(string)
	}
	w.Must(http.StatusCreated, http.MethodPost, "/api/v2/projects", map[string]any{"key": exampleTarget, "name": "Imports"})
	id := example.Str(w.Must(http.StatusOK, http.MethodPost, examplesPath+"/"+exampleTarget+"/launchdarkly", exampleBody(w, "World import"), example.BetaHeader...), "_id")
	path := examplesPath + "/" + exampleTarget + "/launchdarkly/" + id
	w.Must(http.StatusCreated, http.MethodPost, path+"/trigger", nil, example.BetaHeader...)
	exampleImports.Store(w.URL, path)
	return path
}

func examples() example.Set {
	beta := example.BetaHeader
	return example.Set{
		Calls: map[string]example.Example{
			"getFlagImportConfigurations": func(w *example.World) example.Call {
				exampleImport(w)
				return example.Get(examplesPath, beta...)
			},
			"createFlagImportConfiguration": func(w *example.World) example.Call {
				exampleImport(w)
				return example.Post(examplesPath+"/"+exampleTarget+"/launchdarkly", exampleBody(w, w.Unique("import")), beta...)
			},
			"getFlagImportConfiguration": func(w *example.World) example.Call { return example.Get(exampleImport(w), beta...) },
			"patchFlagImportConfiguration": func(w *example.World) example.Call {
				return example.Call{Path: exampleImport(w), Body: []example.Op{example.Replace("/name", w.Unique("Renamed"))}, Headers: beta}
			},
			"deleteFlagImportConfiguration": func(w *example.World) example.Call {
				exampleImport(w)
				id := example.Str(w.Must(http.StatusOK, http.MethodPost, examplesPath+"/"+exampleTarget+"/launchdarkly", exampleBody(w, "Doomed"), beta...), "_id")
				return example.Get(examplesPath+"/"+exampleTarget+"/launchdarkly/"+id, beta...)
			},
			"triggerFlagImportJob": func(w *example.World) example.Call { return example.Post(exampleImport(w)+"/trigger", nil, beta...) },
		},
		// 2.18: a configuration's lastImport and lastError are Unix ms as JSON strings.
		SpecTypes: map[string]map[string]string{"FlagImportStatus": {"lastImport": "string", "lastError": "string"}},
		Dated:     map[string][]string{"FlagImportStatus": {"lastImport", "lastError"}},
	}
}
