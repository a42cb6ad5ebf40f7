package allgroups_test

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// worldSend sends body as JSON to path as the world's admin, beta
// operations included, without a testing.TB (the timestamp table's paths
// get none), and decodes the answer into out unless it is nil. It returns
// the status, 0 when the request could not be sent: a failure shows in
// the read that then goes wrong.
func worldSend(w *apptest.World, method, path string, body, out any) int {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, w.Srv.URL+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", w.Srv.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("SVC-API-Version", "beta")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}
