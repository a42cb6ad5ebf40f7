package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIngestMemoryUnderPressure posts 20 payloads of about 4.7 MB at once
// to the client-side events route of a running server, as a burst of
// browsers flushing large event batches would, and reads the process's
// resident memory from /proc while they are taken in and after. The
// server bounds the payload bytes it holds, so its peak stays under
// 100 MB however many arrive together.
func TestIngestMemoryUnderPressure(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc to read resident memory from")
	}
	s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"))
	token := s.adminToken(t)
	clientSideID := clientSideIDOf(t, s, token)
	baseline := residentKB(t, s.cmd.Process.Pid)

	const payloads = 20
	bodies := make([][]byte, payloads)
	for i := range bodies {
		bodies[i] = bigEventPayload(i, 4_700_000)
	}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		errs     []string
	)
	stop := make(chan struct{})
	// The highest VmRSS seen while sampling, and its parts at that moment:
	// the process's own memory and the pages of the data file it maps.
	type sample struct{ rss, anon, file int }
	sampled := make(chan sample)
	go func() {
		var high sample
		for {
			select {
			case <-stop:
				sampled <- high
				return
			case <-time.After(20 * time.Millisecond):
			}
			pid := s.cmd.Process.Pid
			if rss, ok := readStatusKB(pid, "VmRSS"); ok && rss > high.rss {
				anon, _ := readStatusKB(pid, "RssAnon")
				file, _ := readStatusKB(pid, "RssFile")
				high = sample{rss, anon, file}
			}
		}
	}()
	client := &http.Client{Timeout: 2 * time.Minute}
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/events/bulk/"+clientSideID, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-LaunchDarkly-Payload-ID", fmt.Sprintf("pressure-%d", i))
			res, err := client.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses[res.StatusCode]++
		}()
	}
	wg.Wait()
	answered := residentKB(t, s.cmd.Process.Pid)
	if len(errs) > 0 || statuses[http.StatusAccepted] != payloads {
		t.Fatalf("not every payload was accepted with 202: answers %v, errors %v\n%s", statuses, errs, s.logs.String())
	}
	// What the worker applies after the answers counts too: wait for the
	// last payload's contexts, sampling all the while.
	for i := range payloads {
		waitForContext(t, s, token, fmt.Sprintf("pressure-%d-%d", i, (eventsPerPayload(4_700_000)-1)/10))
	}
	close(stop)
	highSampled := <-sampled
	peak, _ := readStatusKB(s.cmd.Process.Pid, "VmHWM")
	after := residentKB(t, s.cmd.Process.Pid)
	t.Logf("resident memory: %.1f MB before, %.1f MB peak (VmHWM; the highest sampled VmRSS %.1f MB: %.1f MB anonymous, %.1f MB file pages), %.1f MB when every request was answered, %.1f MB once every payload was applied",
		mb(baseline), mb(peak), mb(highSampled.rss), mb(highSampled.anon), mb(highSampled.file), mb(answered), mb(after))

	t.Run("the server's resident memory peaks under 100 MB", func(t *testing.T) {
		if peak >= 100_000 {
			t.Errorf("VmHWM %.1f MB", mb(peak))
		}
	})
}

// clientSideIDOf creates a project and returns its production environment's client-side id.
func clientSideIDOf(tb testing.TB, s *server, token string) string {
	tb.Helper()
	if status, body := do(tb, "POST", s.URL+"/api/v2/projects", token, `{"key":"pressure","name":"Pressure"}`); status != http.StatusCreated {
		tb.Fatalf("create project: %d %s", status, body)
	}
	status, body := do(tb, "GET", s.URL+"/api/v2/projects/pressure/environments/production", token, "")
	var env struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal([]byte(body), &env); status != http.StatusOK || err != nil || env.ID == "" {
		tb.Fatalf("read environment: %d %s", status, body)
	}
	return env.ID
}

// cartPadding makes a custom event about as large as one carrying a
// shopping cart's contents.
var cartPadding = strings.Repeat("x", 2200)

// eventsPerPayload is how many events bigEventPayload writes into size
// bytes; every tenth is an index event of a context of its own, whose key
// is pressure-<payload>-<event/10>.
func eventsPerPayload(size int) int { return size / (len(cartPadding) + 120) }

// bigEventPayload is about size bytes of events as a browser flushes them
// after a long session: index events of new contexts and, between them,
// custom events carrying data.
func bigEventPayload(n, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 4096)
	b.WriteByte('[')
	now := time.Now().UnixMilli()
	for i := range eventsPerPayload(size) {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, `{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"pressure-%d-%d","name":"User %d","country":"NZ"}}`, now, n, i/10, i)
			continue
		}
		fmt.Fprintf(&b, `{"kind":"custom","creationDate":%d,"key":"cart-viewed","contextKeys":{"user":"pressure-%d-%d"},"data":{"items":%q}}`,
			now, n, i/10, cartPadding)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// waitForContext waits until the context key is stored in pressure/production.
func waitForContext(tb testing.TB, s *server, token, key string) {
	tb.Helper()
	url := s.URL + "/api/v2/projects/pressure/environments/production/contexts/user/" + key
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, body := do(tb, "GET", url, token, ""); strings.Contains(body, `"totalCount":1`) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("context %s not stored within a minute", key)
		}
	}
}

// residentKB is the process's resident memory now (VmRSS), in kB.
func residentKB(tb testing.TB, pid int) int {
	tb.Helper()
	kb, ok := readStatusKB(pid, "VmRSS")
	if !ok {
		tb.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return kb
}

// readStatusKB reads one "Name:   123 kB" line of /proc/<pid>/status.
func readStatusKB(pid int, name string) (int, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		return kb, err == nil
	}
	return 0, false
}

func mb(kb int) float64 { return float64(kb) / 1000 }

// TestServeCredentialRateLimit: the SDK credential limit as serve takes it
// from its flag and its environment variable.
func TestServeCredentialRateLimit(t *testing.T) {
	// polls polls /sdk/latest-all n times with the pressure project's SDK
	// key, within one rate-limit window, and returns the answers' statuses
	// and the last answer's headers.
	polls := func(t *testing.T, s *server, n int) ([]int, http.Header) {
		t.Helper()
		token := s.adminToken(t)
		clientSideIDOf(t, s, token)
		_, body := do(t, "GET", s.URL+"/api/v2/projects/pressure/environments/production", token, "")
		var env struct {
			APIKey string `json:"apiKey"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil || env.APIKey == "" {
			t.Fatalf("environment %s", body)
		}
		for attempt := 0; ; attempt++ {
			var statuses []int
			var last *http.Response
			resets := map[string]bool{}
			for range n {
				req, _ := http.NewRequest(http.MethodGet, s.URL+"/sdk/latest-all", nil)
				req.Header.Set("Authorization", env.APIKey)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses, last = append(statuses, res.StatusCode), res
				resets[res.Header.Get("X-Ratelimit-Reset")] = true
			}
			if len(resets) == 1 || attempt == 2 { // else the window turned: again
				return statuses, last.Header
			}
		}
	}
	t.Run("-rate-limit-credential 2 answers an SDK key's third poll in ten seconds with 429 and Retry-After", func(t *testing.T) {
		s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), "-rate-limit-credential", "2")
		if line := s.waitForLog(t, "flagplane started", time.Second); line["rateLimitCredential"] != float64(2) {
			t.Errorf("start line says rateLimitCredential=%v", line["rateLimitCredential"])
		}
		statuses, h := polls(t, s, 3)
		if statuses[0] != http.StatusOK || statuses[1] != http.StatusOK || statuses[2] != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
			t.Errorf("statuses %v, last headers %v", statuses, h)
		}
	})
	t.Run("FLAGPLANE_RATE_LIMIT_CREDENTIAL=0 turns the limit off: no 429 and no rate-limit header", func(t *testing.T) {
		t.Setenv("FLAGPLANE_RATE_LIMIT_CREDENTIAL", "0")
		s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"))
		statuses, h := polls(t, s, 5)
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Errorf("poll %d: %d", i+1, st)
			}
		}
		if h.Get("X-Ratelimit-Reset") != "" {
			t.Errorf("headers %v", h)
		}
	})
	t.Run("a negative -rate-limit-credential is refused with exit 2, naming the flag", func(t *testing.T) {
		res := runCLI(t, t.TempDir(), "serve", "-rate-limit-credential", "-1")
		if res.code != 2 || !strings.Contains(res.stderr, "-rate-limit-credential must be 0 (no limit)") {
			t.Errorf("exit %d: %s", res.code, res.stderr)
		}
	})
}
