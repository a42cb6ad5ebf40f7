package apptest

import (
	"net/http"
	"testing"
)

// Paths and a project of AI Configs, which the tests of AI Configs and of
// their approval requests share.

// AIConfigsPath is the path of project p's AI Configs.
func AIConfigsPath(p string) string { return ProjectPath(p) + "/ai-configs" }

// AIConfigPath is the path of AI Config c of project p.
func AIConfigPath(p, c string) string { return AIConfigsPath(p) + "/" + c }

// AIModelsPath is the path of project p's model configs.
func AIModelsPath(p string) string { return AIConfigsPath(p) + "/model-configs" }

// AIVariationPath is the path of variation v of AI Config c of project p.
func AIVariationPath(p, c, v string) string { return AIConfigPath(p, c) + "/variations/" + v }

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
