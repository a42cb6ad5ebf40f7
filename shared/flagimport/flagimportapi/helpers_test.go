package flagimportapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

const base = "/api/v2/integration-capabilities/flag-import"

// beta is the header every operation of the group needs.
var beta = []string{"SVC-API-Version", "beta"}

func do(tb testing.TB, srv *apptest.Server, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, append(append([]string{}, beta...), headers...)...)
}

func must(tb testing.TB, srv *apptest.Server, status int, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	res := do(tb, srv, method, path, body, headers...)
	if res.Status != status {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, status, res.Body)
	}
	return res
}

// wantError checks an error answer's status and that its message names every part.
func wantError(tb testing.TB, res *apptest.Response, status int, parts ...string) {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	var e struct {
		Message string `json:"message"`
	}
	res.JSON(tb, &e)
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			tb.Errorf("message %q does not name %q", e.Message, p)
		}
	}
}

// config is a configuration as the API answers it.
type config struct {
	ID             string            `json:"_id"`
	IntegrationKey string            `json:"integrationKey"`
	ProjectKey     string            `json:"projectKey"`
	Name           string            `json:"name"`
	Tags           []string          `json:"tags"`
	Version        int               `json:"version"`
	Config         map[string]any    `json:"config"`
	Links          map[string]any    `json:"_links"`
	Access         map[string]any    `json:"_access"`
	Status         configStatus      `json:"_status"`
	Extra          map[string]string `json:"-"`
}

type configStatus struct {
	Status     string `json:"status"`
	LastImport string `json:"lastImport"`
	LastError  string `json:"lastError"`
	Errors     []struct {
		IntegrationID string `json:"integrationId"`
		Message       string `json:"message"`
		StatusCode    int    `json:"statusCode"`
		Timestamp     int64  `json:"timestamp"`
	} `json:"errors"`
}

func decodeConfig(tb testing.TB, res *apptest.Response) config {
	tb.Helper()
	var c config
	res.JSON(tb, &c)
	return c
}

func configPath(c config) string {
	return fmt.Sprintf("%s/%s/%s/%s", base, c.ProjectKey, c.IntegrationKey, c.ID)
}

func createConfig(tb testing.TB, srv *apptest.Server, project, integration string, body map[string]any) config {
	tb.Helper()
	return decodeConfig(tb, must(tb, srv, http.StatusOK, http.MethodPost, base+"/"+project+"/"+integration, body))
}

// trigger runs an import (201 without a body, as the reference answers)
// and returns the configuration read afterwards, with its _status.
func trigger(tb testing.TB, srv *apptest.Server, c config) config {
	tb.Helper()
	if res := must(tb, srv, http.StatusCreated, http.MethodPost, configPath(c)+"/trigger", nil); len(res.Body) != 0 {
		tb.Errorf("the trigger answered a body: %s", res.Body)
	}
	return decodeConfig(tb, must(tb, srv, http.StatusOK, http.MethodGet, configPath(c), nil))
}

// flagJSON is the part of a flag the import sets.
type flagJSON struct {
	Key          string   `json:"key"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Kind         string   `json:"kind"`
	Version      int      `json:"_version"`
	Tags         []string `json:"tags"`
	Temporary    bool     `json:"temporary"`
	MaintainerID string   `json:"maintainerId"`
	Variations   []struct {
		ID    string          `json:"_id"`
		Value json.RawMessage `json:"value"`
		Name  string          `json:"name"`
	} `json:"variations"`
	Defaults     map[string]int          `json:"defaults"`
	Environments map[string]envTargeting `json:"environments"`
}

type envTargeting struct {
	On             bool              `json:"on"`
	Targets        []json.RawMessage `json:"targets"`
	ContextTargets []json.RawMessage `json:"contextTargets"`
	Rules          []json.RawMessage `json:"rules"`
	Fallthrough    json.RawMessage   `json:"fallthrough"`
	OffVariation   *int              `json:"offVariation"`
	Prerequisites  []json.RawMessage `json:"prerequisites"`
}

func getFlag(tb testing.TB, srv *apptest.Server, project, key string) flagJSON {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/flags/"+project+"/"+key, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("GET flag %s/%s: %d %s", project, key, res.Status, res.Body)
	}
	var f flagJSON
	res.JSON(tb, &f)
	return f
}

// flagKeys lists a project's flag keys.
func flagKeys(tb testing.TB, srv *apptest.Server, project string) []string {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/flags/"+project+"?limit=100", nil)
	var out struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	}
	res.JSON(tb, &out)
	keys := make([]string, len(out.Items))
	for i, it := range out.Items {
		keys[i] = it.Key
	}
	return keys
}

// auditCount counts the audit entries of a kind in the newest 100.
func auditEntries(tb testing.TB, srv *apptest.Server) []map[string]any {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/auditlog?limit=20", nil)
	var out struct {
		Items []map[string]any `json:"items"`
	}
	res.JSON(tb, &out)
	return out.Items
}

func ownerID(tb testing.TB, srv *apptest.Server) string {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/members?limit=50", nil)
	var out struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	res.JSON(tb, &out)
	if len(out.Items) == 0 {
		tb.Fatalf("no member: %s", res.Body)
	}
	return out.Items[0].ID
}

// canon re-encodes JSON so equal documents compare equal as strings.
func canon(tb testing.TB, raw json.RawMessage) string {
	tb.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonOf encodes v canonically.
func jsonOf(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return canon(tb, b)
}
