package sdkapi_test

// The OFREP tier's proof (make test-ofrep): OpenFeature's own Node server
// SDK with its OFREP provider (npm @openfeature/server-sdk and
// @openfeature/ofrep-provider, pinned in localstack/ofrep) evaluates flags
// of every type against the local server (flagplane serve) and resolves
// the values, variants, reasons and error codes the evaluate operation
// decides. Without the tier (FLAGPLANE_OFREP_NODE unset) the test skips;
// with FLAGPLANE_REQUIRE_OFREP=1 it fails instead.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// ofrepNode is the directory of the tier's Node project (evaluate.mjs and
// its node_modules); the test skips without the tier and fails when the
// tier is on but the project or node is missing.
func ofrepNode(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("FLAGPLANE_OFREP_NODE")
	required := os.Getenv("FLAGPLANE_REQUIRE_OFREP") == "1"
	if dir == "" {
		if required {
			tb.Fatal("FLAGPLANE_REQUIRE_OFREP=1 but FLAGPLANE_OFREP_NODE is not set: run make test-ofrep")
		}
		tb.Skip("the OFREP tier is off: make test-ofrep runs it (localstack/with-ofrep.sh sets FLAGPLANE_OFREP_NODE)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@openfeature", "ofrep-provider", "package.json")); err != nil {
		tb.Fatalf("the OFREP provider is not installed in %s: %v (localstack/with-ofrep.sh runs npm ci)", dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		tb.Fatalf("node: %v", err)
	}
	return dir
}

// request calls the local server's API, as apptest.Server.Do does: the
// admin token in Authorization unless headers replace it.
func (a localAPI) request(tb testing.TB, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Del(headers[i])
		if headers[i+1] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: read: %v", method, path, err)
	}
	return &apptest.Response{Status: res.StatusCode, Header: res.Header, Body: data}
}

// nodeEvaluate runs evaluate.mjs: OpenFeature's Node SDK with the OFREP
// provider pointed at base with the credential, resolving every case.
func nodeEvaluate(tb testing.TB, dir, base, cred string, cases []apptest.OFREPCase) []apptest.OFREPOutcome {
	tb.Helper()
	type planCase struct {
		Flag    string         `json:"flag"`
		Type    string         `json:"type"`
		Default any            `json:"default"`
		Context map[string]any `json:"context"`
	}
	plan := struct {
		BaseURL string            `json:"baseUrl"`
		Headers map[string]string `json:"headers"`
		Cases   []planCase        `json:"cases"`
	}{BaseURL: base, Headers: map[string]string{"Authorization": cred}}
	for _, c := range cases {
		plan.Cases = append(plan.Cases, planCase{c.Flag, c.Type, c.Default, c.Context})
	}
	in, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "evaluate.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("node evaluate.mjs: %v\n%s", err, stderr.String())
	}
	var out []apptest.OFREPOutcome
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(cases) {
		tb.Fatalf("node evaluate.mjs answered %d resolutions for %d cases (%v): %s\n%s", len(out), len(cases), err, stdout.String(), stderr.String())
	}
	return out
}

func TestOFREPNodeProvider(t *testing.T) {
	dir := ofrepNode(t)
	api := startServe(t, "*")
	if res := api.request(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": "ofn", "name": "OFREP"}); res.Status != http.StatusCreated {
		t.Fatalf("create the project: %d %s", res.Status, res.Body)
	}
	apptest.OFREPFlags(t, api.request, "ofn", "test")
	var env struct {
		APIKey string `json:"apiKey"`
		ID     string `json:"_id"`
	}
	api.request(t, http.MethodGet, "/api/v2/projects/ofn/environments/test", nil).JSON(t, &env)
	for _, cred := range []struct {
		name, value string
		clientSide  bool
	}{
		{"the SDK key", env.APIKey, false},
		{"the SDK key after Bearer", "Bearer " + env.APIKey, false},
		{"the client-side id", env.ID, true},
	} {
		cases := apptest.OFREPCases()
		if cred.clientSide {
			for i := range cases {
				cases[i] = cases[i].ClientSide()
			}
		}
		start := time.Now()
		got := nodeEvaluate(t, dir, api.base, cred.value, cases)
		t.Logf("with %s: %d evaluations through OpenFeature's Node SDK in %v (node's start included)", cred.name, len(cases), time.Since(start).Round(time.Millisecond))
		for i, c := range cases {
			t.Run("with "+cred.name+", "+c.Name, func(t *testing.T) {
				apptest.CheckOFREP(t, api.request, "ofn", "test", c, got[i])
			})
		}
	}
}
