package webhookapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// BenchmarkWebhookDelivery commits 1,000 changes with 5 webhooks listening
// and waits until every delivery has arrived; it fails if any is lost.
func BenchmarkWebhookDelivery(b *testing.B) {
	const changes, hooks = 1000, 5
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		srv := apptest.New(b, apptest.WithWebhookDelivery())
		receivers := make([]*receiver, hooks)
		for i := range receivers {
			receivers[i] = newReceiver(b, 0)
			createHook(b, srv, map[string]any{"url": receivers[i].URL, "sign": true, "on": true,
				"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*:env/*"}, "actions": []string{"*"}}}})
		}
		apptest.EmptyProject(b, srv, "p")
		srv.MustCreateEnvironment(b, "p", "e", nil)
		idle(b, srv)
		base := make([]int, hooks)
		for i, r := range receivers {
			base[i] = len(r.got())
		}
		b.StartTimer()
		for i := range changes {
			res := srv.Do(b, http.MethodPatch, apptest.EnvPath("p", "e"), []apptest.PatchOp{apptest.Replace("/name", fmt.Sprintf("name %d", i))})
			if res.Status != http.StatusOK {
				b.Fatalf("change %d: %d", i, res.Status)
			}
		}
		idle(b, srv)
		b.StopTimer()
		for i, r := range receivers {
			if got := len(r.got()) - base[i]; got != changes {
				b.Fatalf("webhook %d received %d of %d changes", i, got, changes)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(changes*hooks), "deliveries/op")
}
