package localserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLocalIngest posts SDK events to the local server, whose handler
// answers 202 and hands the payload to the in-process queue; the worker
// aggregates it and the context reads back.
func TestLocalIngest(t *testing.T) {
	base, token, stop := startLocal(t, filepath.Join(t.TempDir(), "flagplane.db"))
	defer stop()
	c := &http.Client{Timeout: 5 * time.Second}
	if r := call(t, c, http.MethodPost, base+"/api/v2/projects", token, `{"key":"loc","name":"Loc"}`); r.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %d", r.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v2/projects/loc/environments/production", nil)
	req.Header.Set("Authorization", token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		APIKey string `json:"apiKey"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()

	body := fmt.Sprintf(`[{"kind":"identify","creationDate":%d,"context":{"kind":"user","key":"local-user"}}]`, time.Now().UnixMilli())
	if r := call(t, c, http.MethodPost, base+"/bulk", env.APIKey, body); r.StatusCode != http.StatusAccepted {
		t.Fatalf("post events: %d", r.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v2/projects/loc/environments/production/contexts/user/local-user", nil)
		req.Header.Set("Authorization", token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(got), `"totalCount":1`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the context never appeared: %s", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStopAppliesQueuedEvents stops the local server right after SDK
// events were accepted: the queued payloads are applied before the data
// file closes, so every context reads back after a restart.
func TestStopAppliesQueuedEvents(t *testing.T) {
	data := filepath.Join(t.TempDir(), "flagplane.db")
	base, token, stop := startLocal(t, data)
	c := &http.Client{Timeout: 5 * time.Second}
	if r := call(t, c, http.MethodPost, base+"/api/v2/projects", token, `{"key":"loc","name":"Loc"}`); r.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %d", r.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v2/projects/loc/environments/production", nil)
	req.Header.Set("Authorization", token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		APIKey string `json:"apiKey"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()

	const payloads = 40
	for i := range payloads {
		body := fmt.Sprintf(`[{"kind":"identify","creationDate":%d,"context":{"kind":"user","key":"user-%d"}}]`, time.Now().UnixMilli(), i)
		if r := call(t, c, http.MethodPost, base+"/bulk", env.APIKey, body); r.StatusCode != http.StatusAccepted {
			t.Fatalf("post events %d: %d", i, r.StatusCode)
		}
	}
	stop()

	base, _, stop = startLocal(t, data)
	defer stop()
	for i := range payloads {
		url := fmt.Sprintf("%s/api/v2/projects/loc/environments/production/contexts/user/user-%d", base, i)
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(got), `"totalCount":1`) {
			t.Errorf("context user-%d, accepted before the stop, is lost: %s", i, got)
		}
	}
}
