package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// crashPayload is one SDK flush of fresh contexts and a summary counting
// one evaluation of the flag per context.
type crashPayload struct {
	id    string
	keys  []string
	body  string
	acked bool
}

func newCrashPayload(round, writer, seq, contexts int) *crashPayload {
	p := &crashPayload{id: fmt.Sprintf("r%d-w%d-%d", round, writer, seq)}
	ms := time.Now().UnixMilli()
	events := make([]string, 0, contexts+1)
	for i := 0; i < contexts; i++ {
		key := fmt.Sprintf("%s-%d", p.id, i)
		p.keys = append(p.keys, key)
		events = append(events, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"%s","email":"%s@example.com"}}`, ms, key, key))
	}
	events = append(events, fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{"crash-flag":{"counters":[{"variation":0,"version":1,"value":true,"count":%d}]}}}`,
		ms-1000, ms, contexts))
	p.body = "[" + strings.Join(events, ",") + "]"
	return p
}

// TestKill9DuringIngest runs the real binary through five rounds of an SDK
// event loop (fresh contexts in every payload, some payloads sent twice
// with their payload id, as an SDK retries), each ended by kill -9 at a
// random moment. After a restart on the same data file has applied what
// it kept, every context of every payload answered 202 is there through
// the contexts API, every payload is there whole or not at all (those
// without an answer may go either way), and the context count and the
// flag's evaluation counter count each payload exactly once.
func TestKill9DuringIngest(t *testing.T) {
	const (
		rounds   = 5
		writers  = 3
		contexts = 1000
	)
	data := filepath.Join(t.TempDir(), "flagplane.db")
	s := startServer(t, data)
	token := s.adminToken(t)
	if status, body := do(t, "POST", s.URL+"/api/v2/projects", token, `{"key":"crash","name":"Crash"}`); status != http.StatusCreated {
		t.Fatalf("create project: %d %s", status, body)
	}
	if status, body := do(t, "POST", s.URL+"/api/v2/flags/crash", token, `{"key":"crash-flag","name":"Crash flag"}`); status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", status, body)
	}
	for round := 1; round <= rounds; round++ {
		env := fmt.Sprintf("r%d", round)
		status, body := do(t, "POST", s.URL+"/api/v2/projects/crash/environments", token, `{"key":"`+env+`","name":"`+env+`","color":"ffffff"}`)
		if status != http.StatusCreated {
			t.Fatalf("create environment %s: %d %s", env, status, body)
		}
		var created struct {
			APIKey string `json:"apiKey"`
		}
		if err := json.Unmarshal([]byte(body), &created); err != nil || created.APIKey == "" {
			t.Fatalf("environment %s has no SDK key: %s", env, body)
		}

		var (
			mu       sync.Mutex
			sent     []*crashPayload
			resent   int
			wg       sync.WaitGroup
			firstAck = make(chan struct{})
			once     sync.Once
		)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 30 * time.Second}
				post := func(p *crashPayload) bool {
					req, _ := http.NewRequest("POST", s.URL+"/bulk", strings.NewReader(p.body))
					req.Header.Set("Authorization", created.APIKey)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-LaunchDarkly-Payload-ID", p.id)
					res, err := client.Do(req)
					if err != nil {
						return false // no answer: kept or not, both are right
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					return res.StatusCode == http.StatusAccepted
				}
				for seq := 0; ; seq++ {
					p := newCrashPayload(round, w, seq, contexts)
					mu.Lock()
					sent = append(sent, p)
					mu.Unlock()
					if !post(p) {
						return
					}
					mu.Lock()
					p.acked = true
					mu.Unlock()
					once.Do(func() { close(firstAck) })
					if rand.IntN(4) == 0 { // the SDK did not hear the 202 and sends the payload again
						mu.Lock()
						resent++
						mu.Unlock()
						if !post(p) {
							return
						}
					}
				}
			}()
		}
		select {
		case <-firstAck:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: no payload acknowledged in 30 s:\n%s", round, s.logs.String())
		}
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-s.done
		wg.Wait()

		s = startServer(t, data)
		kept := 0.0
		if strings.Contains(s.logs.String(), "applying SDK event payloads accepted before the last stop") {
			kept, _ = s.waitForLog(t, "applying SDK event payloads accepted before the last stop", time.Second)["payloads"].(float64)
			s.waitForLog(t, "applied the SDK event payloads accepted before the last stop", 2*time.Minute)
		}
		present, total := presentContexts(t, s.URL, token, env)
		evaluations := evaluationsOf(t, s.URL, token, env)

		owner := map[string]*crashPayload{}
		for _, p := range sent {
			for _, k := range p.keys {
				owner[k] = p
			}
		}
		for k := range present {
			if owner[k] == nil {
				t.Errorf("round %d: context %s was never sent", round, k)
			}
		}
		var acked, ackedContexts, unanswered, appliedUnanswered, wantContexts, wantEvaluations int
		for _, p := range sent {
			n := 0
			for _, k := range p.keys {
				if present[k] {
					n++
				}
			}
			switch {
			case p.acked && n != len(p.keys):
				t.Errorf("round %d: payload %s was answered 202, and %d of its %d contexts are missing", round, p.id, len(p.keys)-n, len(p.keys))
			case n != 0 && n != len(p.keys):
				t.Errorf("round %d: payload %s is there in part: %d of %d contexts", round, p.id, n, len(p.keys))
			}
			if p.acked {
				acked++
				ackedContexts += len(p.keys)
			} else {
				unanswered++
				if n > 0 {
					appliedUnanswered++
				}
			}
			if n > 0 {
				wantContexts += len(p.keys)
				wantEvaluations += len(p.keys)
			}
		}
		if total != wantContexts || len(present) != wantContexts {
			t.Errorf("round %d: totalCount %d and %d contexts listed; want %d, each once", round, total, len(present), wantContexts)
		}
		if evaluations != wantEvaluations {
			t.Errorf("round %d: %d evaluations counted; want %d, each payload once", round, evaluations, wantEvaluations)
		}
		t.Logf("round %d: kill -9 after %d payloads answered 202 (%d contexts; %d of them sent twice); %d without an answer (%d of them applied); "+
			"the restart applied %.0f kept payloads; then %d contexts present, %d evaluations counted",
			round, acked, ackedContexts, resent, unanswered, appliedUnanswered, kept, len(present), evaluations)
		if t.Failed() {
			t.FailNow()
		}
	}
}

// presentContexts lists an environment's contexts through the contexts
// API, page by page, and returns their keys and the first page's totalCount.
func presentContexts(tb testing.TB, base, token, env string) (map[string]bool, int) {
	tb.Helper()
	present := map[string]bool{}
	total := -1
	cursor := ""
	for {
		body := `{"limit":50}`
		if cursor != "" {
			body = `{"limit":50,"continuationToken":"` + cursor + `"}`
		}
		status, res := do(tb, "POST", base+"/api/v2/projects/crash/environments/"+env+"/contexts/search", token, body)
		if status != http.StatusOK {
			tb.Fatalf("search contexts: %d %s", status, res)
		}
		var page struct {
			Items []struct {
				Context string `json:"context"`
			} `json:"items"`
			TotalCount        *int   `json:"totalCount"`
			ContinuationToken string `json:"continuationToken"`
		}
		if err := json.Unmarshal([]byte(res), &page); err != nil {
			tb.Fatal(err)
		}
		if total < 0 && page.TotalCount != nil {
			total = *page.TotalCount
		}
		for _, it := range page.Items {
			var c struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal([]byte(it.Context), &c); err != nil {
				tb.Fatalf("context %q: %v", it.Context, err)
			}
			if present[c.Key] {
				tb.Errorf("context %s listed twice", c.Key)
			}
			present[c.Key] = true
		}
		if page.ContinuationToken == "" {
			return present, total
		}
		cursor = page.ContinuationToken
	}
}

// evaluationsOf sums the flag's evaluations in env through the usage API.
func evaluationsOf(tb testing.TB, base, token, env string) int {
	tb.Helper()
	status, res := do(tb, "GET", base+"/api/v2/usage/evaluations/crash/"+env+"/crash-flag", token, "", "LD-API-Version", "beta")
	if status != http.StatusOK {
		tb.Fatalf("evaluations usage: %d %s", status, res)
	}
	var usage struct {
		Series []map[string]int64 `json:"series"`
	}
	if err := json.Unmarshal([]byte(res), &usage); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, point := range usage.Series {
		for k, v := range point {
			if k != "time" {
				n += int(v)
			}
		}
	}
	return n
}
