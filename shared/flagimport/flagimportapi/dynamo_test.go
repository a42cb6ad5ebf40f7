package flagimportapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
)

// TestImportOnDynamoDB runs an import and the run lease on DynamoDB (Local,
// in make test-dynamodb; skipped without it): the lease's conditional
// write and the configuration's index in real transactions.
func TestImportOnDynamoDB(t *testing.T) {
	table, _ := dynamotest.NewTable(t)
	src := apptest.New(t)
	seedSource(t, src)
	dst := apptest.New(t, apptest.WithTable(table), apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")

	t.Run("of triggers sent at once exactly one runs", func(t *testing.T) {
		triggerAtOnce(t, dst, "dst", 4, 20*time.Second)
	})
	t.Run("an import creates the source's flags, and a rerun changes none", func(t *testing.T) {
		c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src"}})
		if got := trigger(t, dst, c); got.Status.Status != "complete" {
			t.Fatalf("_status %+v", got.Status)
		}
		sameTargeting(t, src, dst, "dark-mode")
		sameTargeting(t, src, dst, "banner")
		before := getFlag(t, dst, "dst", "dark-mode").Version
		if got := trigger(t, dst, c); got.Status.Status != "complete" {
			t.Fatalf("_status %+v", got.Status)
		}
		if after := getFlag(t, dst, "dst", "dark-mode").Version; after != before {
			t.Errorf("version %d after the rerun, want %d", after, before)
		}
	})
	t.Run("the account-wide list holds both configurations", func(t *testing.T) {
		var out struct {
			Items []config `json:"items"`
		}
		must(t, dst, http.StatusOK, http.MethodGet, base, nil).JSON(t, &out)
		if len(out.Items) != 2 {
			t.Errorf("%d configurations listed, want 2", len(out.Items))
		}
	})
}
