package trigger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
	"github.com/flagplane/flagplane/shared/trigger"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is the trigger service over a fresh embedded store holding project
// "p" (environments test and production) and boolean flag "f".
type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	flags *flag.Service
	svc   *trigger.Service
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return t0 }
	a := audittest.New(tb, now)
	b, log := a.Table, a.Log
	projects := project.NewService(b, log, now)
	envs := environment.NewService(b, log, projects, false, now)
	flags := flag.NewService(b, log, now)
	ctx := context.Background()
	if _, _, err := projects.Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	if _, err := flags.Create(ctx, "p", flag.Input{Key: ptr("f"), Name: ptr("F")}); err != nil {
		tb.Fatal(err)
	}
	return &rig{table: b, log: log, flags: flags, svc: trigger.NewService(b, log, flags, envs, now)}
}

func ptr[T any](v T) *T { return &v }

func instructions(kinds ...string) []semanticpatch.Instruction {
	out := make([]semanticpatch.Instruction, len(kinds))
	for i, k := range kinds {
		out[i] = semanticpatch.New(k, nil)
	}
	return out
}

func valid() trigger.Input {
	return trigger.Input{Name: "on alert", ResourceKey: "f", Task: &trigger.Task{Instructions: instructions("turnFlagOn")},
		TriggerSource: &trigger.Source{Type: "datadog"}}
}

func (r *rig) create(tb testing.TB, in trigger.Input) (*trigger.Trigger, string) {
	tb.Helper()
	t, tok, err := r.svc.Create(context.Background(), "p", "production", in)
	if err != nil {
		tb.Fatal(err)
	}
	return t, tok
}

// load reads the trigger as stored, version and all, as a firing does.
func (r *rig) load(tb testing.TB, id, tok string) *trigger.Trigger {
	tb.Helper()
	t, err := r.svc.Authenticate(context.Background(), id, tok)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func (r *rig) flagOn(tb testing.TB) bool {
	tb.Helper()
	f, err := r.flags.Load(context.Background(), "p", "f")
	if err != nil {
		tb.Fatal(err)
	}
	return f.EnvView("production").On
}

func TestCreateRefusals(t *testing.T) {
	r := newRig(t)
	with := func(change func(*trigger.Input)) trigger.Input {
		in := valid()
		change(&in)
		return in
	}
	cases := []struct {
		name string
		in   trigger.Input
		part string
	}{
		{"a trigger without a task is refused", with(func(in *trigger.Input) { in.Task = nil }), `"task"`},
		{"a trigger without a source is refused", with(func(in *trigger.Input) { in.TriggerSource = nil }), `"triggerSource"`},
		{"a nameless trigger is refused", with(func(in *trigger.Input) { in.Name = "" }), `"name"`},
		{"a long name is refused", with(func(in *trigger.Input) { in.Name = strings.Repeat("n", 257) }), `"name"`},
		{"a resource kind other than flag is refused", with(func(in *trigger.Input) { in.ResourceKind = "segment" }), `"resourceKind"`},
		{"a trigger without a flag is refused", with(func(in *trigger.Input) { in.ResourceKey = "" }), `"resourceKey"`},
		{"a flag that does not exist is refused naming it", with(func(in *trigger.Input) { in.ResourceKey = "nope" }), `flag "nope"`},
		{"a source without a type is refused", with(func(in *trigger.Input) { in.TriggerSource = &trigger.Source{} }), `"triggerSource.type"`},
		{"a task without instructions is refused", with(func(in *trigger.Input) { in.Task = &trigger.Task{} }), `"task.instructions"`},
		{"an instruction without a kind is refused naming its index", with(func(in *trigger.Input) { in.Task.Instructions = instructions("turnFlagOn", "") }), `"task.instructions[1].kind"`},
		{"an instruction that does not apply to the flag is refused", with(func(in *trigger.Input) {
			in.Task.Instructions = []semanticpatch.Instruction{semanticpatch.New("updateOffVariation", map[string]any{"variationId": "missing"})}
		}), `"task.instructions"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := r.svc.Create(context.Background(), "p", "production", c.in)
			faulttest.Want(t, err, fault.Invalid, c.part)
		})
	}
	t.Run("an environment that does not exist is not found", func(t *testing.T) {
		_, _, err := r.svc.Create(context.Background(), "p", "nope", valid())
		faulttest.Want(t, err, fault.NotFound, `"nope"`)
	})
	t.Run("nothing refused was stored", func(t *testing.T) {
		all, err := r.svc.List(context.Background(), "p", "production")
		if err != nil || len(all) != 0 {
			t.Errorf("%d triggers, %v", len(all), err)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	r := newRig(t)
	created, tok := r.create(t, valid())
	_, otherTok := r.create(t, valid())
	t.Run("the token is stored only as its hash, and reads show neither", func(t *testing.T) {
		it, err := r.table.Get(context.Background(), store.AdaptiveTriggerKey(created.ID))
		if err != nil || strings.Contains(string(it.Data), tok) || created.TokenHash != "" {
			t.Errorf("stored %s, shown hash %q, %v", it.Data, created.TokenHash, err)
		}
	})
	t.Run("the trigger's token finds it", func(t *testing.T) {
		if got := r.load(t, created.ID, tok); got.ID != created.ID {
			t.Errorf("found %s", got.ID)
		}
	})
	refused := []struct {
		name, id, tok string
	}{
		{"a missing token is refused", created.ID, ""},
		{"another trigger's token is refused", created.ID, otherTok},
		{"a token for an id that does not exist is refused alike", "2b6a5e1c-7a0e-4f43-9a55-0d2c5f1b9a11", tok},
		{"a malformed id is refused alike", "not-a-uuid", tok},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Authenticate(context.Background(), c.id, c.tok)
			faulttest.Want(t, err, fault.Unauthorized, "does not match")
		})
	}
}

func TestFire(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	created, tok := r.create(t, valid())
	refused := []struct {
		name, event string
		code        fault.Code
		part        string
	}{
		{"a firing without an event id is refused", "", fault.Invalid, `"eventId"`},
		{"an overlong event id is refused", strings.Repeat("e", trigger.MaxEventIDLength+1), fault.Invalid, `"eventId"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Fire(ctx, r.load(t, created.ID, tok), c.event)
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("a firing runs the instructions and records the event and the firing", func(t *testing.T) {
		got, err := r.svc.Fire(ctx, r.load(t, created.ID, tok), "evt-1")
		if err != nil || got.Status != trigger.StatusApplied || got.At != t0.UnixMilli() || !r.flagOn(t) {
			t.Fatalf("firing %+v, %v; flag on %v", got, err, r.flagOn(t))
		}
		it, err := r.table.Get(ctx, store.AdaptiveTriggerEventKey(created.ID, "evt-1"))
		if err != nil || it.TTL != t0.Add(trigger.EventTTL).Unix() {
			t.Errorf("event item %+v, %v; want it kept for EventTTL", it, err)
		}
		if last := r.load(t, created.ID, tok).LastFiring; last == nil || last.EventID != "evt-1" || last.Status != trigger.StatusApplied {
			t.Errorf("last firing %+v", last)
		}
	})
	t.Run("the same event again is a duplicate and runs nothing", func(t *testing.T) {
		before := len(audittest.Actions(t, r.log))
		got, err := r.svc.Fire(ctx, r.load(t, created.ID, tok), "evt-1")
		if err != nil || got.Status != trigger.StatusDuplicate || len(audittest.Actions(t, r.log)) != before {
			t.Errorf("firing %+v, %v; %d audit entries from %d", got, err, len(audittest.Actions(t, r.log)), before)
		}
	})
	t.Run("a disabled trigger does not fire", func(t *testing.T) {
		off := r.load(t, created.ID, tok)
		off.Enabled = false
		_, err := r.svc.Fire(ctx, off, "evt-2")
		faulttest.Want(t, err, fault.Conflict, "disabled")
	})
}

func TestConcurrentFirings(t *testing.T) {
	t.Run("two deliveries of one event run it once", func(t *testing.T) {
		r := newRig(t)
		created, tok := r.create(t, valid())
		statuses := fireTogether(t, r, created.ID, tok, "evt", "evt")
		if strings.Join(statuses, " ") != "applied duplicate" && strings.Join(statuses, " ") != "duplicate applied" {
			t.Errorf("statuses %v, want one applied and one duplicate", statuses)
		}
		if n := strings.Count(strings.Join(audittest.Actions(t, r.log, "flag"), " "), "updateOn"); n != 1 {
			t.Errorf("%d flag changes, want 1", n)
		}
	})
	t.Run("two different events at once both run: the loser fires again on the trigger as it now is", func(t *testing.T) {
		r := newRig(t)
		created, tok := r.create(t, valid())
		statuses := fireTogether(t, r, created.ID, tok, "a", "b")
		if strings.Join(statuses, " ") != "applied applied" {
			t.Errorf("statuses %v, want both applied", statuses)
		}
		for _, e := range []string{"a", "b"} {
			if _, err := r.table.Get(context.Background(), store.AdaptiveTriggerEventKey(created.ID, e)); err != nil {
				t.Errorf("event %s not recorded: %v", e, err)
			}
		}
		if got := r.load(t, created.ID, tok); got.Version != 3 {
			t.Errorf("trigger at version %d, want 3: one write per firing", got.Version)
		}
	})
}

// fireTogether fires the trigger once per event, at once, each firing's
// writes held until all are ready, and returns each outcome's status.
func fireTogether(tb testing.TB, r *rig, id, tok string, events ...string) []string {
	tb.Helper()
	statuses := make([]string, len(events))
	loaded := make([]*trigger.Trigger, len(events))
	for i := range events {
		loaded[i] = r.load(tb, id, tok)
	}
	for i, err := range r.table.Race(len(events), func(i int) error {
		f, err := r.svc.Fire(context.Background(), loaded[i], events[i])
		statuses[i] = f.Status
		return err
	}) {
		if err != nil {
			tb.Errorf("fire %s: %v", events[i], err)
		}
	}
	return statuses
}

func TestAFiringTheFlagRefusesIsRecordedOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	created, tok := r.create(t, valid())
	if err := r.flags.Delete(ctx, "p", "f"); err != nil {
		t.Fatal(err)
	}
	got, err := r.svc.Fire(ctx, r.load(t, created.ID, tok), "evt")
	t.Run("the flag service's refusal is returned as it gave it", func(t *testing.T) {
		faulttest.Want(t, err, fault.NotFound, `"f"`)
	})
	t.Run("the trigger records the failed firing with its code", func(t *testing.T) {
		last := r.load(t, created.ID, tok).LastFiring
		if got.Status != trigger.StatusFailed || last == nil || last.Status != trigger.StatusFailed || last.Code != string(fault.NotFound) || last.Error == "" {
			t.Errorf("firing %+v, last %+v", got, last)
		}
	})
	t.Run("the failure has its audit entry", func(t *testing.T) {
		if a := audittest.Actions(t, r.log); a[len(a)-1] != "fireAdaptiveTrigger" {
			t.Errorf("audit actions %v", a)
		}
	})
	t.Run("a repeat of the failed event is a duplicate", func(t *testing.T) {
		again, err := r.svc.Fire(ctx, r.load(t, created.ID, tok), "evt")
		if err != nil || again.Status != trigger.StatusDuplicate {
			t.Errorf("firing %+v, %v", again, err)
		}
	})
}
