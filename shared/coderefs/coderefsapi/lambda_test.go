package coderefsapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

// TestBranchNamesWithSlashesThroughLambda: the scanner escapes a branch's
// slashes (feature%2Fx); API Gateway hands the function the raw path, and
// the code-refs function routes it to the one branch, not a longer path.
func TestBranchNamesWithSlashesThroughLambda(t *testing.T) {
	srv := apptest.New(t)
	wantStatus(t, srv.Do(t, http.MethodPost, repos, map[string]any{"name": "svc"}), http.StatusOK)
	h, err := srv.App.Handler("code-refs")
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(method, rawPath string, body any) events.APIGatewayV2HTTPResponse {
		t.Helper()
		data, _ := json.Marshal(body)
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: method + " /api/v2/code-refs/repositories/{repo}/branches/{branch}",
			RawPath: rawPath, Headers: map[string]string{"authorization": srv.Token, "content-type": "application/json"}, Body: string(data)}
		ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = method, rawPath
		ev.RequestContext.DomainName, ev.RequestContext.RequestID = "flagplane.example", "req-1"
		res, err := lambdafn.Adapt(h)(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := invoke(http.MethodPut, repos+"/svc/branches/feature%2Fx", branchBody("feature/x", "c1", 0, "alpha")); res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", res.StatusCode, res.Body)
	}
	res := invoke(http.MethodGet, repos+"/svc/branches/feature%2Fx", nil)
	var b struct{ Name string }
	if err := json.Unmarshal([]byte(res.Body), &b); res.StatusCode != http.StatusOK || err != nil || b.Name != "feature/x" {
		t.Errorf("read back: %d %s", res.StatusCode, res.Body)
	}
}
