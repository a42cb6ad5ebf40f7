package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/team"
)

// clock is a settable time the services read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// rig is the approval service over a fresh embedded store, with project
// "p" (environments "test" and "production"; production needs
// minApprovals approvals) and boolean flag "f".
type rig struct {
	table store.Table
	log   *audit.Log
	clock *clock
	flags *flag.Service
	envs  *environment.Service
	svc   *approval.Service
	// newService builds a second service over the same store, as a second instance would.
	newService func() *approval.Service
}

func newRig(tb testing.TB, settings string) *rig {
	tb.Helper()
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	a := audittest.New(tb, c.now)
	table, log := a.Table, a.Log
	projects := project.NewService(table, log, c.now)
	roles := role.NewService(table, log, c.now)
	members := member.NewService(table, log, roles, c.now)
	teams := team.NewService(table, log, roles, members, c.now)
	envs := environment.NewService(table, log, projects, true, c.now)
	flags := flag.NewService(table, log, c.now)
	ctx := context.Background()
	if _, _, err := projects.Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	setApprovals(tb, table, settings)
	if _, err := flags.Create(ctx, "p", flag.Input{Key: ptr("f"), Name: ptr("F"), Tags: []string{"risky"}}); err != nil {
		tb.Fatal(err)
	}
	if _, err := flags.Create(ctx, "p", flag.Input{Key: ptr("plain"), Name: ptr("Plain")}); err != nil {
		tb.Fatal(err)
	}
	r := &rig{table: table, log: log, clock: c, flags: flags, envs: envs}
	r.newService = func() *approval.Service {
		return approval.NewService(table, log, flag.NewService(table, log, c.now), envs, projects, members, teams, c.now)
	}
	r.svc = approval.NewService(table, log, flags, envs, projects, members, teams, c.now)
	return r
}

// setApprovals writes production's approval settings straight in the
// store: the API takes them only by patch, and some (autoApply) not at all.
func setApprovals(tb testing.TB, table store.Table, settings string) {
	tb.Helper()
	ctx := context.Background()
	it, err := table.Get(ctx, store.EnvironmentKey("p", "production"))
	if err != nil {
		tb.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(it.Data, &doc); err != nil {
		tb.Fatal(err)
	}
	a := doc["approvalSettings"].(map[string]any)
	if err := json.Unmarshal([]byte(settings), &a); err != nil {
		tb.Fatal(err)
	}
	if it.Data, err = json.Marshal(doc); err != nil {
		tb.Fatal(err)
	}
	if err := table.Put(ctx, it, store.IfVersion(it.Version)); err != nil {
		tb.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// as is a context whose caller is member id, or the service token id when it starts with "tok-".
func as(id string) context.Context {
	if strings.HasPrefix(id, "tok-") {
		return identity.With(context.Background(), identity.Principal{TokenID: id, ServiceToken: true})
	}
	return identity.With(context.Background(), identity.Principal{MemberID: id, TokenID: "t-" + id})
}

// request creates a request by "requester" to turn f on in production.
func (r *rig) request(tb testing.TB, execution *int64) *approval.Request {
	tb.Helper()
	in := approval.Input{ResourceID: ptr("proj/p:env/production:flag/f"), Description: ptr("turn it on"),
		Instructions: json.RawMessage(`[{"kind":"turnFlagOn"}]`)}
	if execution != nil {
		in.ExecutionDate = (*jsondoc.Millis)(execution)
	}
	req, err := r.svc.Create(as("requester"), in)
	if err != nil {
		tb.Fatal(err)
	}
	return req
}

func (r *rig) flagOn(tb testing.TB) (bool, int) {
	tb.Helper()
	f, err := r.flags.Load(context.Background(), "p", "f")
	if err != nil {
		tb.Fatal(err)
	}
	v := f.EnvView("production")
	return v.On, v.Version
}

func review(tb testing.TB, s *approval.Service, who, id, kind string) *approval.Request {
	tb.Helper()
	req, err := s.Review(as(who), id, approval.ReviewInput{Kind: kind})
	if err != nil {
		tb.Fatalf("%s by %s: %v", kind, who, err)
	}
	return req
}

func TestReviewStatusFollowsTheReviews(t *testing.T) {
	cases := []struct {
		name    string
		reviews [][2]string // who, kind
		want    string
	}{
		{"one approval of two needed leaves the request pending", [][2]string{{"a", "approve"}}, approval.ReviewPending},
		{"the same member approving twice counts once", [][2]string{{"a", "approve"}, {"a", "approve"}}, approval.ReviewPending},
		{"comments do not count as approvals", [][2]string{{"a", "approve"}, {"b", "comment"}, {"c", "comment"}}, approval.ReviewPending},
		{"two distinct members approve it", [][2]string{{"a", "approve"}, {"b", "approve"}}, approval.ReviewApproved},
		{"a member and a service token are distinct approvers", [][2]string{{"a", "approve"}, {"tok-1", "approve"}}, approval.ReviewApproved},
		{"one decline declines it whatever the approvals before", [][2]string{{"a", "approve"}, {"b", "decline"}}, approval.ReviewDeclined},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, `{"required":true,"minNumApprovals":2}`)
			req := r.request(t, nil)
			for _, rv := range c.reviews {
				req = review(t, r.svc, rv[0], req.ID, rv[1])
			}
			if req.ReviewStatus != c.want || req.Status != approval.StatusPending || len(req.AllReviews) != len(c.reviews) {
				t.Errorf("review %s, status %s, %d reviews; want %s, pending, %d", req.ReviewStatus, req.Status, len(req.AllReviews), c.want, len(c.reviews))
			}
		})
	}
}

func TestReviewRefusals(t *testing.T) {
	r := newRig(t, `{"required":true,"minNumApprovals":1}`)
	cases := []struct {
		name  string
		setup func(tb testing.TB) string
		who   string
		kind  string
		code  fault.Code
		part  string
	}{
		{"an unknown kind is refused naming the field", func(tb testing.TB) string { return r.request(tb, nil).ID }, "a", "like", fault.Invalid, `"kind"`},
		{"the requester may not approve their own request", func(tb testing.TB) string { return r.request(tb, nil).ID }, "requester", "approve", fault.Forbidden, "review their own"},
		{"a declined request can no longer be approved", func(tb testing.TB) string {
			id := r.request(tb, nil).ID
			review(tb, r.svc, "a", id, "decline")
			return id
		}, "b", "approve", fault.Invalid, "can no longer be approved"},
		{"an applied request can no longer be declined", func(tb testing.TB) string {
			id := r.request(tb, nil).ID
			review(tb, r.svc, "a", id, "approve")
			if _, err := r.svc.Apply(as("a"), id, approval.ApplyInput{}); err != nil {
				tb.Fatal(err)
			}
			return id
		}, "b", "decline", fault.Invalid, "is completed"},
		{"a missing request is not found", func(testing.TB) string { return "nope" }, "a", "approve", fault.NotFound, `"nope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Review(as(c.who), c.setup(t), approval.ReviewInput{Kind: c.kind})
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("the requester may still comment on their own request", func(t *testing.T) {
		req := review(t, r.svc, "requester", r.request(t, nil).ID, "comment")
		if len(req.AllReviews) != 1 || req.ReviewStatus != approval.ReviewPending {
			t.Errorf("after a comment: %+v", req)
		}
	})
}

func TestConcurrentReviewsAllLand(t *testing.T) {
	r := newRig(t, `{"required":true,"minNumApprovals":50}`)
	req := r.request(t, nil)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.svc.Review(as(fmt.Sprintf("m%d", i)), req.ID, approval.ReviewInput{Kind: approval.KindApprove})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a review failed: %v", err)
		}
	}
	got, err := r.svc.Get(context.Background(), req.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.AllReviews) != n || got.Version != 1+n {
		t.Errorf("%d reviews at version %d, want %d at %d", len(got.AllReviews), got.Version, n, 1+n)
	}
	if a := audittest.Actions(t, r.log, "approvalRequest"); strings.Count(strings.Join(a, " "), "reviewApprovalRequest") != n {
		t.Errorf("audit actions %v, want %d reviews", a, n)
	}
}

func TestScheduledRequests(t *testing.T) {
	r := newRig(t, `{"required":true,"minNumApprovals":1}`)
	due := r.clock.now().Add(time.Hour).UnixMilli()
	req := r.request(t, &due)

	t.Run("the approving review schedules a request whose execution date is ahead", func(t *testing.T) {
		req = review(t, r.svc, "a", req.ID, "approve")
		if req.Status != approval.StatusScheduled || req.ReviewStatus != approval.ReviewApproved {
			t.Errorf("status %s, review %s; want scheduled, approved", req.Status, req.ReviewStatus)
		}
	})
	t.Run("a scheduled request is not applied by hand", func(t *testing.T) {
		_, err := r.svc.Apply(as("a"), req.ID, approval.ApplyInput{})
		faulttest.Want(t, err, fault.Invalid, "scheduled for")
	})
	t.Run("the scheduler leaves it before its date", func(t *testing.T) {
		n, err := r.svc.RunDue(context.Background(), time.UnixMilli(due-1))
		if err != nil || n != 0 {
			t.Errorf("RunDue = %d, %v; want 0", n, err)
		}
		if on, _ := r.flagOn(t); on {
			t.Error("the flag was turned on early")
		}
	})
	t.Run("two schedulers at its date apply it once", func(t *testing.T) {
		_, before := r.flagOn(t)
		services := []*approval.Service{r.svc, r.newService(), r.newService(), r.newService()}
		counts := make([]int, len(services))
		var wg sync.WaitGroup
		for i, s := range services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := s.RunDue(context.Background(), time.UnixMilli(due))
				if err != nil {
					t.Errorf("RunDue: %v", err)
				}
				counts[i] = n
			}()
		}
		wg.Wait()
		total := 0
		for _, n := range counts {
			total += n
		}
		on, after := r.flagOn(t)
		if total != 1 || !on || after != before+1 {
			t.Errorf("applied %d times (%v), flag on %v at version %d from %d; want once", total, counts, on, after, before)
		}
		got, err := r.svc.Get(context.Background(), req.ID)
		if err != nil || got.Status != approval.StatusCompleted {
			t.Errorf("request %+v, %v; want completed", got, err)
		}
	})
	t.Run("a completed request is history and is not deleted", func(t *testing.T) {
		faulttest.Want(t, r.svc.Delete(context.Background(), req.ID), fault.Invalid, "only a pending or scheduled request")
	})
	t.Run("create and review wrote their entries, and the apply the flag's change", func(t *testing.T) {
		want := "createApprovalRequest reviewApprovalRequest updateOn"
		if got := strings.Join(audittest.Actions(t, r.log, "approvalRequest", "flag"), " "); !strings.HasSuffix(got, want) {
			t.Errorf("audit actions %v, want them to end %v", got, want)
		}
	})
}

func TestApplyOnAFlagChangedSince(t *testing.T) {
	r := newRig(t, `{"required":false,"minNumApprovals":1}`)
	ctx := context.Background()
	req, err := r.svc.Create(as("requester"), approval.Input{ResourceID: ptr("proj/p:env/production:flag/plain"), Description: ptr("archive"),
		Instructions: json.RawMessage(`[{"kind":"turnFlagOn"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	review(t, r.svc, "a", req.ID, "approve")
	if _, err := r.svc.Conflicts(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.flags.Delete(ctx, "p", "plain"); err != nil {
		t.Fatal(err)
	}
	t.Run("conflicts name the flag that is gone", func(t *testing.T) {
		cs, err := r.svc.Conflicts(ctx, req, nil)
		if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Reason, "no longer exists") {
			t.Errorf("conflicts %+v, %v", cs, err)
		}
	})
	t.Run("the apply marks the request failed with the reason", func(t *testing.T) {
		got, err := r.svc.Apply(as("a"), req.ID, approval.ApplyInput{})
		if err != nil || got.Status != approval.StatusFailed || got.FailureReason == "" {
			t.Fatalf("apply = %+v, %v; want failed with a reason", got, err)
		}
		_, err = r.svc.Apply(as("a"), req.ID, approval.ApplyInput{})
		faulttest.Want(t, err, fault.Invalid, "failed")
	})
}

func TestCheckRefusesDirectChanges(t *testing.T) {
	r := newRig(t, `{"required":false,"requiredApprovalTags":["risky"]}`)
	ctx := context.Background()
	load := func(tb testing.TB, key string) *flag.Flag {
		tb.Helper()
		f, err := r.flags.Load(ctx, "p", key)
		if err != nil {
			tb.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name    string
		env     string
		flag    string
		refused bool
	}{
		{"a flag carrying a required tag needs approval", "production", "f", true},
		{"a flag without the tag is changed directly", "production", "plain", false},
		{"another environment without settings is changed directly", "test", "f", false},
		{"a missing environment is left to the change to report", "gone", "f", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := r.svc.Check(ctx, "p", c.env, load(t, c.flag))
			if c.refused {
				faulttest.Want(t, err, fault.MethodNotAllowed, approval.CollectionHref)
			} else if err != nil {
				t.Errorf("Check = %v, want nil", err)
			}
		})
	}
}

func TestParseFilter(t *testing.T) {
	reqs := map[string]*approval.Request{
		"mine":   {RequestorID: "m1", ResourceID: "proj/p:env/e:flag/f", ProjectKey: "p", Status: "pending", ReviewStatus: "approved", NotifyMemberIDs: []string{"n1"}},
		"token":  {RequestorServiceTokenID: "t1", ResourceID: "proj/q:env/e:aiconfig/c", ProjectKey: "q", Status: "completed", ReviewStatus: "approved", ResourceKind: approval.KindAIConfig},
		"theirs": {RequestorID: "m2", ResourceID: "proj/p:env/e:flag/g", ProjectKey: "p", Status: "failed", ReviewStatus: "declined", NotifyMemberIDs: []string{"n2", "n3"}},
	}
	cases := []struct {
		name   string
		filter string
		want   string // the names of the requests kept, sorted, space separated
	}{
		{"an empty filter keeps everything", "", "mine theirs token"},
		{"requestorId matches a member or a service token", "requestorId equals t1", "token"},
		{"status anyOf takes a JSON list", `status anyOf ["pending","failed"]`, "mine theirs"},
		{"reviewStatus anyOf takes a bare list", "reviewStatus anyOf [approved]", "mine token"},
		{"notifyMemberIds keeps requests notifying any of them", "notifyMemberIds anyOf [n3, n1]", "mine theirs"},
		{"resourceKind aiConfig keeps AI Config requests", "resourceKind equals aiConfig", "token"},
		{"resourceKind flag keeps flag requests", "resourceKind equals flag", "mine theirs"},
		{"every entry must hold", `projectKey equals p, status anyOf ["pending"]`, "mine"},
		{"a comma inside a list does not split the filter", `status anyOf ["pending","completed"],projectKey equals "q"`, "token"},
		{"resourceId equals one resource", "resourceId equals proj/p:env/e:flag/g", "theirs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			match, err := approval.ParseFilter(c.filter)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, name := range []string{"mine", "theirs", "token"} {
				if match(reqs[name]) {
					kept = append(kept, name)
				}
			}
			if got := strings.Join(kept, " "); got != c.want {
				t.Errorf("kept %q, want %q", got, c.want)
			}
		})
	}
	refused := []struct {
		name, filter, part string
	}{
		{"an unknown field is refused naming the supported ones", "color equals red", "notifyMemberIds, requestorId"},
		{"the wrong operator is refused with the form to use", "status equals pending", "`status anyOf <value>`"},
		{"a missing value is refused", "projectKey equals", "`projectKey equals <value>`"},
		{"anyOf needs a list", "status anyOf pending", "must be a list"},
		{"an unknown resource kind is refused", "resourceKind equals segmentx", `"segmentx"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := approval.ParseFilter(c.filter)
			faulttest.Want(t, err, fault.Invalid, c.part)
		})
	}
}
