package apptest

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/example"
)

// Paths and a project of AI Configs, which the tests of AI Configs and of
// their approval requests share.

var (
	AIConfigsPath   = example.AIConfigsPath
	AIConfigPath    = example.AIConfigPath
	AIModelsPath    = example.AIModelsPath
	AIVariationPath = example.AIVariationPath
)

// AIProject creates a project without environments holding two model
// configs ("gpt" and "claude") and an AI Config "chat" with the variation
// "short" on gpt.
func AIProject(tb testing.TB, srv *Server, key string) {
	tb.Helper()
	EmptyProject(tb, srv, key)
	for _, m := range []string{"gpt", "claude"} {
		WantStatus(tb, srv.Do(tb, http.MethodPost, AIModelsPath(key), map[string]any{"key": m, "name": m, "id": m + "-model", "params": map[string]any{"temperature": 0.2}}), http.StatusOK)
	}
	WantStatus(tb, srv.Do(tb, http.MethodPost, AIConfigsPath(key), map[string]any{"key": "chat", "name": "Chat", "tags": []string{"support"},
		"defaultVariation": map[string]any{"key": "short", "name": "Short", "modelConfigKey": "gpt", "messages": []map[string]any{{"role": "system", "content": "Be brief."}}}}), http.StatusCreated)
}
