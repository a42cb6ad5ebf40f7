package allgroups_test

import (
	"net/http"
	"sync"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The flag-imports group (shared/flagimport/flagimportapi) in the
// cross-cutting tables. The world's server may reach loopback, so a
// configuration imports the world project's flags from the world server
// itself (its LaunchDarkly-compatible API) into a project of its own.

const flagImportsPath = api + "/integration-capabilities/flag-import"

// flagImportTarget is the project the world's imports write to.
const flagImportTarget = "imports"

// worldFlagImports are each world's configuration path, made (and run
// once, so its _status has a lastImport) on first use.
var worldFlagImports sync.Map // *apptest.World → path

// flagImportBody is a configuration reading the world project.
func flagImportBody(w *apptest.World, name string) map[string]any {
	return map[string]any{"name": name, "tags": []string{"migration"}, "config": map[string]any{
		"baseUrl": w.Srv.URL, "apiKey": w.Srv.Token, "sourceProjectKey": w.Project, "ldTag": "imported"}}
}

// worldFlagImport returns the world's configuration path, creating it
// through plain HTTP (the timestamp table's paths get no testing.TB).
func worldFlagImport(w *apptest.World) string {
	if p, ok := worldFlagImports.Load(w); ok {
		return p.(string)
	}
	worldSend(w, http.MethodPost, api+"/projects", map[string]any{"key": flagImportTarget, "name": "Imports"}, nil)
	var out struct {
		ID string `json:"_id"`
	}
	worldSend(w, http.MethodPost, flagImportsPath+"/"+flagImportTarget+"/launchdarkly", flagImportBody(w, "World import"), &out)
	path := flagImportsPath + "/" + flagImportTarget + "/launchdarkly/" + out.ID
	worldSend(w, http.MethodPost, path+"/trigger", nil, nil)
	worldFlagImports.Store(w, path)
	return path
}

func init() {

	timestampTable = append(timestampTable, timestampRow{resource: "flag import configurations", source: "spec 2.18",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return worldFlagImport(w) }),
			tsList(func(w *apptest.World) string { worldFlagImport(w); return flagImportsPath }),
		},
		fields: []timestampField{tsString("_status.lastImport"), tsWhenSet(tsString("_status.lastError")), tsWhenSet(tsInteger("_status.errors[].timestamp"))}})
}
