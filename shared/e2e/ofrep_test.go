package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// TestOFREPThroughTheSDKFunction evaluates OpenFeature's remote
// evaluation protocol through the real sdk bootstrap behind the API
// Gateway front, on DynamoDB Local, one flag at a time and in bulk, with
// the SDK key and the client-side id, and compares every answer with the
// evaluate operation's (served by the contexts function).
func TestOFREPThroughTheSDKFunction(t *testing.T) {
	s := e2eStack(t)
	p := s.newProject(t, "ofrep")
	env := s.newEnvironment(t, p, "test", nil)
	apptest.OFREPFlags(t, s.do, p, "test")
	sdkKey, clientSideID := env["apiKey"].(string), env["_id"].(string)
	before := s.functions["sdk"].Stats().Invocations

	for _, cred := range []struct {
		name, value string
		clientSide  bool
	}{
		{"the SDK key", sdkKey, false},
		{"the client-side id", clientSideID, true},
	} {
		for _, c := range apptest.OFREPCases() {
			if cred.clientSide {
				c = c.ClientSide()
			}
			t.Run("with "+cred.name+", "+c.Name, func(t *testing.T) {
				body := map[string]any{"context": c.Context}
				single := s.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags/"+c.Flag, body, "Authorization", cred.value)
				wantCode := http.StatusOK
				switch c.ErrorCode {
				case "":
				case "FLAG_NOT_FOUND":
					wantCode = http.StatusNotFound
				default:
					wantCode = http.StatusBadRequest
				}
				if single.Status != wantCode {
					t.Fatalf("single evaluation: %d, want %d: %s", single.Status, wantCode, single.Body)
				}
				apptest.CheckOFREP(t, s.do, p, "test", c, apptest.OFREPOutcomeOf(t, single.Body, c.Default))

				bulk := s.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags", body, "Authorization", cred.value)
				if c.ErrorCode == "TARGETING_KEY_MISSING" {
					if bulk.Status != http.StatusBadRequest || bulk.Map(t)["errorCode"] != c.ErrorCode {
						t.Errorf("bulk evaluation: %d %s", bulk.Status, bulk.Body)
					}
					return
				}
				wantStatus(t, bulk, http.StatusOK)
				got := apptest.OFREPOutcome{Value: c.Default, Reason: "ERROR", ErrorCode: "FLAG_NOT_FOUND"} // a flag absent from the bulk answer
				var doc struct{ Flags []json.RawMessage }
				bulk.JSON(t, &doc)
				for _, f := range doc.Flags {
					var k struct{ Key string }
					_ = json.Unmarshal(f, &k)
					if k.Key == c.Flag {
						got = apptest.OFREPOutcomeOf(t, f, c.Default)
					}
				}
				apptest.CheckOFREP(t, s.do, p, "test", c, got)

				etag := bulk.Header.Get("ETag")
				again := s.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags", body, "Authorization", cred.value, "If-None-Match", etag)
				if etag == "" || again.Status != http.StatusNotModified {
					t.Errorf("the bulk evaluation again with If-None-Match %q: %d %s\nfirst: %s", etag, again.Status, again.Body, bulk.Body)
				}
			})
		}
	}
	if s.functions["sdk"].Stats().Invocations == before {
		t.Error("the sdk function was never invoked")
	}
}
