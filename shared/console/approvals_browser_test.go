package console_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

func TestConsoleApprovals(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	flag := p2JSON(t, c, "POST", "/api/v2/flags/shop", map[string]any{"key": "checkout", "name": "New checkout"}, 201)
	trueID := flag["variations"].([]any)[0].(map[string]any)["_id"].(string)
	c.API(t, "PATCH", "/api/v2/projects/shop/environments/production", []map[string]any{
		{"op": "replace", "path": "/approvalSettings/required", "value": true},
	}, 200)
	// The requester is a service token of its own: the console's admin is
	// then another reviewer, as a second person would be.
	bot := p2JSON(t, c, "POST", "/api/v2/tokens", map[string]any{"name": "release-bot", "role": "writer", "serviceToken": true}, 201)["token"].(string)
	request := func(tok, description string) string {
		t.Helper()
		b := c.APIAs(t, tok, "POST", "/api/v2/approval-requests", map[string]any{
			"resourceId": "proj/shop:env/production:flag/checkout", "description": description,
			"instructions": []map[string]any{{"kind": "turnFlagOn"}, {"kind": "addTargets", "contextKind": "user", "variationId": trueID, "values": []string{"qa-1"}}},
		}, "", 201)
		var out struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	botReq := request(bot, "Launch checkout")
	ownReq := request(c.Token, "My own launch")
	c.SignIn(t, c.Token)

	t.Run("the pending list shows each request with status, resource, requester and environment", func(t *testing.T) {
		c.Go(t, "/approvals")
		row := c.Text(t, fmt.Sprintf(`#approvals-list tr[data-id=%q]`, botReq))
		for _, want := range []string{"Launch checkout", "pending", "flag checkout", "production", "service token"} {
			if !strings.Contains(row, want) {
				t.Errorf("the row %q does not say %q", row, want)
			}
		}
	})

	t.Run("a request's page diffs what applying would change in the flag now", func(t *testing.T) {
		c.Go(t, "/approvals/"+botReq)
		paths := p2Strings(t, c, `[...document.querySelectorAll("#approval-diff tbody tr")].map(r => r.dataset.path + ":" + r.dataset.kind)`)
		if fmt.Sprint(paths) != "[/environments/production/on:change /environments/production/targets/0:add]" {
			t.Errorf("the diff rows are %v", paths)
		}
		if got := c.Text(t, `#approval-diff tr[data-path="/environments/production/on"]`); !strings.Contains(got, "false") || !strings.Contains(got, "true") {
			t.Errorf("the on row says %q", got)
		}
	})

	t.Run("the requester's own approval is refused with the API's answer", func(t *testing.T) {
		c.Go(t, "/approvals/"+ownReq)
		p2Click(t, c, "#approval-approve")
		p2Dialog(t, c, "looks fine to me", true)
		p2Wait(t, c, `!!document.querySelector("#approval-result .error")`)
		if got := c.Text(t, "#approval-result .error"); !strings.Contains(got, "403") || !strings.Contains(got, "own request") {
			t.Errorf("the refusal says %q", got)
		}
		if s := p2JSON(t, c, "GET", "/api/v2/approval-requests/"+ownReq, nil, 200)["reviewStatus"]; s != "pending" {
			t.Errorf("after the refusal the request is %v", s)
		}
	})

	t.Run("another reviewer approves and applies; the flag changes and the audit log records it", func(t *testing.T) {
		c.Go(t, "/approvals/"+botReq)
		p2Click(t, c, "#approval-approve")
		p2Dialog(t, c, "ship it", true)
		p2Wait(t, c, `document.querySelector("#approval-review-status") && document.querySelector("#approval-review-status").textContent.startsWith("approved")`)
		if got := c.Text(t, "#approval-reviews"); !strings.Contains(got, "approve") || !strings.Contains(got, "ship it") {
			t.Errorf("the reviews say %q", got)
		}
		p2Click(t, c, "#approval-apply")
		p2Dialog(t, c, "launch day", true)
		p2Wait(t, c, `document.querySelector("#approval-status") && document.querySelector("#approval-status").textContent === "completed"`)
		f := p2JSON(t, c, "GET", "/api/v2/flags/shop/checkout?env=production", nil, 200)
		env := f["environments"].(map[string]any)["production"].(map[string]any)
		if env["on"] != true || !strings.Contains(fmt.Sprint(env["targets"]), "qa-1") {
			t.Errorf("after apply the flag is on=%v targets=%v", env["on"], env["targets"])
		}
		log := p2JSON(t, c, "GET", "/api/v2/auditlog?limit=5", nil, 200)
		found := false
		for _, it := range log["items"].([]any) {
			e := it.(map[string]any)
			if strings.Contains(fmt.Sprint(e["accesses"]), "proj/shop:env/production:flag/checkout") && strings.Contains(fmt.Sprint(e["accesses"]), "updateOn") {
				found = true
			}
		}
		if !found {
			t.Errorf("no audit entry of the applied change among %v", log["items"])
		}
		c.Go(t, "/approvals")
		if ids := p2Strings(t, c, `[...document.querySelectorAll("#approvals-list tbody tr")].map(r => r.dataset.id)`); fmt.Sprint(ids) != fmt.Sprintf("[%s]", ownReq) {
			t.Errorf("the open list shows %v after the apply", ids)
		}
	})

	t.Run("a request is deleted after a confirmation", func(t *testing.T) {
		c.Go(t, "/approvals/"+ownReq)
		p2Click(t, c, "#approval-delete")
		p2Dialog(t, c, "", true)
		p2Wait(t, c, `document.body.dataset.page === "/approvals"`)
		c.API(t, "GET", "/api/v2/approval-requests/"+ownReq, nil, 404)
	})
}
