package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
)

func TestPatchNeeds(t *testing.T) {
	actions := func(p patch.Patch) ([]string, error) {
		return p.Actions(map[string]string{"name": "updateName"}, "a thing")
	}
	needs := api.PatchNeeds("a thing", actions)
	for _, tc := range []struct {
		name, contentType, body string
		want                    []string
		code                    fault.Code
		message                 string
	}{
		{name: "a JSON patch needs the action of each path it changes", contentType: "application/json",
			body: `[{"op":"replace","path":"/name","value":"n"}]`, want: []string{"updateName"}},
		{name: "a semantic patch is refused, naming the resource", contentType: "application/json; domain-model=launchdarkly.semanticpatch",
			body: `{"instructions":[]}`, code: fault.Invalid, message: "a thing takes a JSON patch"},
		{name: "a body that is not a patch is refused", contentType: "application/json", body: `{}`, code: fault.Invalid},
		{name: "a path the resource does not let change is refused", contentType: "application/json",
			body: `[{"op":"replace","path":"/key","value":"k"}]`, code: fault.Invalid, message: "/key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PATCH", "/x", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.contentType)
			got, err := needs(r, []byte(tc.body))
			if tc.code != "" {
				if !fault.Is(err, tc.code) || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("error %v, want %s containing %q", err, tc.code, tc.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("needs %+v, want actions %v", got, tc.want)
			}
			for i, n := range got {
				if n.Action != tc.want[i] || n.On != nil {
					t.Errorf("need %d is %+v, want action %s on the path's resource", i, n, tc.want[i])
				}
			}
		})
	}
}
