package eventapi_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	flagapi "github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/ingest/eventapi"
)

func TestEventMediaTypes(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "media")
	payload := func(key string) string { return apptest.GoSDKPayload(time.Now(), key) }
	diagnostic := `{"kind":"diagnostic-init","sdk":{"name":"go-server-sdk","version":"7.14.6"}}`
	routes := []struct {
		path, auth string
		body       func(key string) string
	}{
		{"/bulk", e.SDKKey, payload},
		{"/mobile/events/bulk", "api_key " + e.MobileKey, payload},
		{"/events/bulk/" + e.ClientID, "", payload},
		{"/diagnostic", e.SDKKey, func(string) string { return diagnostic }},
		{"/mobile/events/diagnostic", "api_key " + e.MobileKey, func(string) string { return diagnostic }},
		{"/events/diagnostic/" + e.ClientID, "", func(string) string { return diagnostic }},
	}
	for _, c := range []struct {
		name        string
		contentType string
		status      int
	}{
		{"a text/plain body is refused with 415", "text/plain", http.StatusUnsupportedMediaType},
		{"a text/plain body with a charset is refused with 415", "text/plain; charset=UTF-8", http.StatusUnsupportedMediaType},
		{"a form body is refused with 415", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"a Content-Type that does not parse is refused with 415", "json", http.StatusUnsupportedMediaType},
		{"application/json is accepted", "application/json", http.StatusAccepted},
		{"application/json with a charset is accepted", "application/json; charset=utf-8", http.StatusAccepted},
		{"a body without Content-Type is read as JSON", "", http.StatusAccepted},
	} {
		for i, r := range routes {
			t.Run(c.name+" on "+strings.Replace(r.path, e.ClientID, "{clientSideId}", 1), func(t *testing.T) {
				key := fmt.Sprintf("media-%d-%d", i, len(c.name))
				res := srv.Do(t, http.MethodPost, r.path, r.body(key), "Authorization", r.auth, "Content-Type", c.contentType)
				if c.status == http.StatusAccepted {
					apptest.WantStatus(t, res, c.status)
				} else {
					apptest.WantError(t, res, c.status, "unsupported_media_type", "application/json")
				}
				if !strings.Contains(r.path, "bulk") {
					return
				}
				var stored struct{ TotalCount int }
				srv.Do(t, http.MethodGet, apptest.EnvPath(e.Project, e.Env)+"/contexts/user/"+key, nil).JSON(t, &stored)
				if accepted := c.status == http.StatusAccepted; accepted != (stored.TotalCount > 0) {
					t.Errorf("answered %d, and %d contexts of the payload stored", res.Status, stored.TotalCount)
				}
			})
		}
	}
}

// stalledUpload starts a payload of size bytes and sends only its first
// bytes, so it holds its room among the payloads in flight; it returns a
// function that sends the rest and returns the status.
func stalledUpload(tb testing.TB, srv *apptest.Server, clientID string, size int) func() int {
	tb.Helper()
	addr := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	// An empty array padded with spaces to size.
	body := "[" + strings.Repeat(" ", size-2) + "]"
	fmt.Fprintf(conn, "POST /events/bulk/%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		clientID, addr, len(body), body[:10])
	return func() int {
		if _, err := conn.Write([]byte(body[10:])); err != nil {
			tb.Fatalf("send the rest of the payload: %v", err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			tb.Fatalf("read the answer: %v", err)
		}
		res.Body.Close()
		return res.StatusCode
	}
}

func TestPayloadBytesInFlight(t *testing.T) {
	eventapi.SetPayloadWait(t, 500*time.Millisecond)
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "flight")
	small := func() *apptest.Response {
		return srv.Do(t, http.MethodPost, "/events/bulk/"+e.ClientID, apptest.GoSDKPayload(time.Now(), "u1"), "Authorization", "")
	}
	large := func() *apptest.Response {
		// An empty array padded past SmallPayload.
		return srv.Do(t, http.MethodPost, "/events/bulk/"+e.ClientID, "["+strings.Repeat(" ", eventapi.SmallPayload)+"]", "Authorization", "")
	}
	// fill holds room with stalled payloads of size bytes until total is taken.
	fill := func(total, size int) []func() int {
		var finish []func() int
		for left := total; left > 0; left -= min(left, size) {
			finish = append(finish, stalledUpload(t, srv, e.ClientID, min(left, size)))
		}
		time.Sleep(100 * time.Millisecond) // let the server take them in
		return finish
	}
	wantBusy := func(t *testing.T, res *apptest.Response, began time.Time) {
		t.Helper()
		apptest.WantError(t, res, http.StatusServiceUnavailable, "service_unavailable", "again")
		if res.Header.Get(flagapi.HeaderRetryAfter) == "" {
			t.Errorf("no Retry-After: %v", res.Header)
		}
		if took := time.Since(began); took < 400*time.Millisecond {
			t.Errorf("answered after %s, without waiting for room", took)
		}
	}

	finishLarge := fill(eventapi.LargePayloadsInFlight, ingest.MaxBody)
	t.Run("a large payload finding no room waits, then is answered 503 with Retry-After", func(t *testing.T) {
		began := time.Now()
		wantBusy(t, large(), began)
	})
	t.Run("a small payload is not held up by large ones", func(t *testing.T) {
		if res := small(); res.Status != http.StatusAccepted {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
	finishSmall := fill(eventapi.SmallPayloadsInFlight, eventapi.SmallPayload)
	t.Run("a small payload finding no room among small ones waits, then is answered 503", func(t *testing.T) {
		began := time.Now()
		wantBusy(t, small(), began)
	})
	t.Run("payloads waiting for room are taken once those in flight end", func(t *testing.T) {
		eventapi.SetPayloadWait(t, 20*time.Second)
		waitingSmall, waitingLarge := make(chan *apptest.Response), make(chan *apptest.Response)
		go func() { waitingSmall <- small() }()
		go func() { waitingLarge <- large() }()
		time.Sleep(100 * time.Millisecond)
		for _, finish := range []func() int{finishSmall[0], finishLarge[0]} {
			if status := finish(); status != http.StatusAccepted {
				t.Fatalf("a stalled payload, once sent whole: %d", status)
			}
		}
		for _, waiting := range []chan *apptest.Response{waitingSmall, waitingLarge} {
			if res := <-waiting; res.Status != http.StatusAccepted {
				t.Errorf("a waiting payload: %d %s", res.Status, res.Body)
			}
		}
	})
}
