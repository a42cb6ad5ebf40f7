package flagimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/flagimport"
	"github.com/flagplane/flagplane/shared/webhook"
)

// stepClock is a clock that moves on by step at every reading.
type stepClock struct {
	mu   sync.Mutex
	at   time.Time
	step time.Duration
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(c.step)
	return c.at
}

// newService builds the service over srv's store, with a clock of its own.
func newService(tb testing.TB, srv *apptest.Server, now func() time.Time) *flagimport.Service {
	tb.Helper()
	a := srv.App
	return flagimport.NewService(flagimport.Deps{Table: a.Table, Log: a.Services.Audit, Projects: a.Services.Projects, Flags: a.Services.Flags,
		Segments: a.Services.Segments, Guard: webhook.Guard{AllowPrivate: true}, Now: now})
}

func TestARunStopsAtItsBudgetAndTheNextPicksUpTheRest(t *testing.T) {
	src := apptest.New(t)
	src.MustCreateProject(t, "src")
	for i := range 6 {
		if res := src.Do(t, http.MethodPost, "/api/v2/flags/src", map[string]any{"key": fmt.Sprintf("flag-%d", i), "name": "F"}); res.Status != http.StatusCreated {
			t.Fatalf("seed: %d %s", res.Status, res.Body)
		}
	}
	dst := apptest.New(t)
	dst.MustCreateProject(t, "dst")
	ctx := context.Background()
	cfg, _ := json.Marshal(map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src"})

	// Every reading of the clock takes a second; a run may take three, so it
	// ends part of the way through the flags (the real time stays short).
	clock := &stepClock{at: time.Now(), step: time.Second}
	s := newService(t, dst, clock.now)
	s.RunBudget = 3 * time.Second
	c, err := s.Create(ctx, "dst", flagimport.LaunchDarkly, flagimport.Input{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := s.Trigger(ctx, "dst", flagimport.LaunchDarkly, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the first run imports some flags, then reports the rest as not reached", func(t *testing.T) {
		if first.Status != flagimport.StatusPartial || first.Created == 0 || first.Created == 6 || len(first.Errors) != 1 {
			t.Fatalf("run %+v, want partial with some flags created and one error", first)
		}
		e := first.Errors[0]
		if e.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Message, "of 6 flags") || !strings.Contains(e.Message, "trigger the import again") {
			t.Errorf("error %+v", e)
		}
	})
	t.Run("a next run as short starts where the first stopped, so it creates more", func(t *testing.T) {
		s := newService(t, dst, (&stepClock{at: time.Now(), step: time.Second}).now)
		s.RunBudget = 3 * time.Second
		_, second, err := s.Trigger(ctx, "dst", flagimport.LaunchDarkly, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if second.Created == 0 || second.Unchanged != 0 {
			t.Errorf("run %+v, want new flags created before any already imported is looked at", second)
		}
		first.Created += second.Created
	})
	t.Run("a run with time enough creates the rest and leaves the earlier runs' flags alone", func(t *testing.T) {
		s := newService(t, dst, time.Now)
		_, last, err := s.Trigger(ctx, "dst", flagimport.LaunchDarkly, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last.Status != flagimport.StatusComplete || last.Created != 6-first.Created || last.Unchanged != first.Created || last.Updated != 0 || last.ResumeAfter != "" {
			t.Errorf("run %+v, want complete: %d created, %d unchanged", last, 6-first.Created, first.Created)
		}
	})
}

func TestASourceSlowerThanTheBudgetFailsTheRun(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	dst := apptest.New(t)
	dst.MustCreateProject(t, "dst")
	s := newService(t, dst, time.Now)
	s.RunBudget = 200 * time.Millisecond
	cfg, _ := json.Marshal(map[string]any{"baseUrl": slow.URL, "apiKey": "k", "sourceProjectKey": "src"})
	ctx := context.Background()
	c, err := s.Create(ctx, "dst", flagimport.LaunchDarkly, flagimport.Input{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, run, err := s.Trigger(ctx, "dst", flagimport.LaunchDarkly, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(began) > 2*time.Second {
		t.Errorf("the trigger took %s, past its budget", time.Since(began))
	}
	if run.Status != flagimport.StatusFailed || len(run.Errors) != 1 || run.Errors[0].StatusCode != http.StatusGatewayTimeout {
		t.Errorf("run %+v, want failed with a 504", run)
	}
}
