package lambdafn_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

// TestRateLimitsFromTheStack runs a function as the stack configures it:
// the limits come from its environment, and each instance counts alone.
func TestRateLimitsFromTheStack(t *testing.T) {
	t.Run("without the variables the defaults apply", func(t *testing.T) {
		t.Setenv(app.EnvRateLimitGlobal, "")
		t.Setenv(app.EnvRateLimitRoute, "")
		t.Setenv(app.EnvRateLimitCredential, "")
		s, err := app.SettingsFromEnv()
		if err != nil || s.RateLimits != api.DefaultRateLimits {
			t.Errorf("limits %+v (%v), want %+v", s.RateLimits, err, api.DefaultRateLimits)
		}
	})
	for _, variable := range []string{app.EnvRateLimitRoute, app.EnvRateLimitCredential} {
		for _, bad := range []string{"-1", "lots", "1e3", "2000000000"} {
			t.Run("a limit of "+bad+" in "+variable+" stops the function from starting, naming the variable", func(t *testing.T) {
				t.Setenv(variable, bad)
				if _, err := app.SettingsFromEnv(); err == nil || !strings.Contains(err.Error(), variable) {
					t.Errorf("err %v", err)
				}
			})
		}
	}
	t.Run("a credential limit in the environment is the SDK routes' limit", func(t *testing.T) {
		t.Setenv(app.EnvRateLimitCredential, "7")
		if s, err := app.SettingsFromEnv(); err != nil || s.RateLimits.Credential != 7 {
			t.Errorf("limits %+v (%v)", s.RateLimits, err)
		}
	})

	t.Setenv(app.EnvRateLimitGlobal, "0")
	t.Setenv(app.EnvRateLimitRoute, "2")
	settings, err := app.SettingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	table, accountID, adminToken := bootstrapped(t)
	settings.AccountID = accountID
	h, err := app.New(table, audit.Discard{}, settings, quiet, allgroups.List()...).Handler("webhooks")
	if err != nil {
		t.Fatal(err)
	}
	invoke := func() events.APIGatewayV2HTTPResponse {
		resp, err := lambdafn.Adapt(h)(t.Context(), sampleEvent(t, "webhooks-list.json", adminToken))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var got []events.APIGatewayV2HTTPResponse
	for attempt := 0; attempt < 3; attempt++ { // again if the ten-second window turned meanwhile
		got = []events.APIGatewayV2HTTPResponse{invoke(), invoke(), invoke()}
		if got[0].Headers[api.HeaderReset] == got[2].Headers[api.HeaderReset] {
			break
		}
	}
	if got[0].StatusCode != 200 || got[1].StatusCode != 200 || got[0].Headers[api.HeaderRouteRemaining] != "1" {
		t.Fatalf("first two: %d %d, headers %v", got[0].StatusCode, got[1].StatusCode, got[0].Headers)
	}
	last := got[2]
	if last.StatusCode != 429 || !strings.Contains(last.Body, `"rate_limited"`) || last.Headers[api.HeaderRetryAfter] == "" {
		t.Errorf("third: %d %s, headers %v", last.StatusCode, last.Body, last.Headers)
	}
	if _, ok := last.Headers[api.HeaderGlobalRemaining]; ok {
		t.Errorf("a global limit of 0 is off, yet the answer has %s", api.HeaderGlobalRemaining)
	}
}
