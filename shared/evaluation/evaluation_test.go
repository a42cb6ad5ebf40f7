package evaluation_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// writes is a table that counts every write made through it.
type writes struct {
	store.Table
	n atomic.Int64
}

func (w *writes) Put(ctx context.Context, it store.Item, c store.Cond) error {
	w.n.Add(1)
	return w.Table.Put(ctx, it, c)
}

func (w *writes) Delete(ctx context.Context, k store.Key, c store.Cond) error {
	w.n.Add(1)
	return w.Table.Delete(ctx, k, c)
}

func (w *writes) Transact(ctx context.Context, ws []store.Write) error {
	w.n.Add(1)
	return w.Table.Transact(ctx, ws)
}

func ptr[T any](v T) *T { return &v }

// setup stores project "p" with boolean flags: "alpha" (tag beta, on in
// production, targeting u1 with false), "bravo" (off), "charlie" (on,
// with alpha serving true as prerequisite) and "delta" (archived), and
// returns the table the evaluation service reads.
func setup(tb testing.TB) *writes {
	tb.Helper()
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	a := audittest.New(tb, now)
	table, log := a.Table, a.Log
	ctx := context.Background()
	if _, _, err := project.NewService(table, log, now).Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	flags := flag.NewService(table, log, now)
	ids := map[string][]string{}
	for _, f := range []struct{ key, name, tag string }{{"alpha", "Zed", "beta"}, {"bravo", "Yak", ""}, {"charlie", "Xylo", "beta"}, {"delta", "Wren", ""}} {
		in := flag.Input{Key: ptr(f.key), Name: ptr(f.name)}
		if f.tag != "" {
			in.Tags = []string{f.tag}
		}
		d, err := flags.Create(ctx, "p", in)
		if err != nil {
			tb.Fatal(err)
		}
		ids[f.key] = []string{d.Flag.Variations[0].ID, d.Flag.Variations[1].ID}
	}
	run := func(key, env string, ins ...string) {
		sp, err := semanticpatch.Parse([]byte(`{"instructions":[` + strings.Join(ins, ",") + `]}`))
		if err != nil {
			tb.Fatal(err)
		}
		sp.EnvironmentKey = env
		if _, err := flags.SemanticPatch(ctx, "p", key, sp); err != nil {
			tb.Fatalf("patch %s: %v", key, err)
		}
	}
	run("alpha", "production", `{"kind":"turnFlagOn"}`, fmt.Sprintf(`{"kind":"addUserTargets","values":["u1"],"variationId":%q}`, ids["alpha"][1]))
	run("charlie", "production", `{"kind":"turnFlagOn"}`, fmt.Sprintf(`{"kind":"addPrerequisite","key":"alpha","variationId":%q}`, ids["alpha"][0]))
	run("delta", "", `{"kind":"archiveFlag"}`)
	return &writes{Table: table}
}

func user(key string) ldcontext.Context { return ldcontext.New(key) }

// summary is "key=value/REASON" for each evaluation, in order.
func summary(res evaluation.Result) string {
	var out []string
	for _, e := range res.Items {
		s := fmt.Sprintf("%s=%s/%s", e.Key, e.Value, e.Reason.Kind)
		if e.Reason.PrerequisiteKey != "" {
			s += ":" + e.Reason.PrerequisiteKey
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestEvaluate(t *testing.T) {
	table := setup(t)
	svc := evaluation.NewService(table)
	ctx := context.Background()
	cases := []struct {
		name  string
		user  string
		env   string
		q     evaluation.Query
		want  string
		total int64
	}{
		{"each live flag serves by its targeting, archived ones are left out", "u2", "production", evaluation.Query{Limit: -1},
			"alpha=true/FALLTHROUGH bravo=false/OFF charlie=true/FALLTHROUGH", 3},
		{"an individually targeted user gets its variation, and the flag needing it fails its prerequisite", "u1", "production", evaluation.Query{Limit: -1},
			"alpha=false/TARGET_MATCH bravo=false/OFF charlie=false/PREREQUISITE_FAILED:alpha", 3},
		{"another environment serves its own targeting", "u1", "test", evaluation.Query{Limit: -1},
			"alpha=false/OFF bravo=false/OFF charlie=false/OFF", 3},
		{"a tag filter keeps flags with the tag, yet prerequisites outside it still count", "u1", "production", evaluation.Query{Filter: "tags contains [beta]", Limit: -1},
			"alpha=false/TARGET_MATCH charlie=false/PREREQUISITE_FAILED:alpha", 2},
		{"a query filter matches key or name, ignoring case", "u2", "production", evaluation.Query{Filter: `query equals "YA"`, Limit: -1},
			"bravo=false/OFF", 1},
		{"a name sort orders by name, and the page counts every match", "u2", "production", evaluation.Query{Sort: "-name", Offset: 1, Limit: 1},
			"bravo=false/OFF", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := svc.Evaluate(ctx, "p", c.env, user(c.user), c.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res); got != c.want || res.TotalCount != c.total {
				t.Errorf("got %s (%d), want %s (%d)", got, res.TotalCount, c.want, c.total)
			}
		})
	}
	missing := []struct {
		name, project, env, part string
	}{
		{"an unknown project is not found", "nope", "production", `project "nope"`},
		{"an unknown environment is not found", "p", "staging", `environment "staging"`},
		{"a malformed environment key is not found", "p", "no such", `environment "no such"`},
	}
	for _, c := range missing {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.Evaluate(ctx, c.project, c.env, user("u1"), evaluation.Query{})
			if !fault.Is(err, fault.NotFound) || !strings.Contains(err.Error(), c.part) {
				t.Errorf("error %v, want not found naming %s", err, c.part)
			}
		})
	}
	t.Run("an unknown sort field is refused", func(t *testing.T) {
		_, err := svc.Evaluate(ctx, "p", "production", user("u1"), evaluation.Query{Sort: "created"})
		if !fault.Is(err, fault.Invalid) {
			t.Errorf("error %v, want invalid", err)
		}
	})
	t.Run("evaluating writes nothing", func(t *testing.T) {
		if n := table.n.Load(); n != 0 {
			t.Errorf("%d writes", n)
		}
	})
}

func TestParseFilter(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		query string // "-" for none
		tags  string
	}{
		{"nothing filters nothing", "", "-", ""},
		{"query equals a bare word", "query equals dark", "dark", ""},
		{"a quoted query may hold commas", `query equals "a, b",tags contains beta`, "a, b", "beta"},
		{"tags contains a JSON list", `tags contains ["beta","q1"]`, "-", "beta q1"},
		{"tags contains a bare list", "tags contains [beta, q1]", "-", "beta q1"},
		{"the field:value form of other lists is taken too", "query:dark,tags:beta+q1", "dark", "beta q1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := evaluation.ParseFilter(c.raw)
			if err != nil {
				t.Fatal(err)
			}
			q := "-"
			if f.Query != nil {
				q = *f.Query
			}
			if q != c.query || strings.Join(f.Tags, " ") != c.tags {
				t.Errorf("query %q tags %v, want %q %q", q, f.Tags, c.query, c.tags)
			}
		})
	}
	refused := []struct {
		name, raw, part string
	}{
		{"an entry without an operator is refused showing the form", "dark", "field operator value"},
		{"an unknown field is refused naming the supported ones", "key equals x", "use one of query, tags"},
		{"a field given twice is refused", "query equals a,query equals b", "given twice"},
		{"query takes only equals", "query contains a", `"equals"`},
		{"tags takes only contains", "tags equals a", `"contains"`},
		{"an unclosed tag list is refused", "tags contains [a", "closing ]"},
		{"an empty tag list is refused", "tags contains []", "at least one tag"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := evaluation.ParseFilter(c.raw)
			if !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), c.part) {
				t.Errorf("error %v, want invalid naming %q", err, c.part)
			}
		})
	}
}

func TestParseContext(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // the context's fully qualified key, or the part of the refusal
		ok         bool
	}{
		{"a single-kind context is read", `{"kind":"user","key":"u1","name":"Ann"}`, "u1", true},
		{"a multi-kind context is read", `{"kind":"multi","user":{"key":"u1"},"org":{"key":"o1"}}`, "org:o1:user:u1", true},
		{"a context without a kind is refused, saying what to send", `{"key":"u1"}`, `"kind" is required`, false},
		{"a kind that is not a string is refused", `{"kind":5,"key":"u1"}`, `"kind" must be a string`, false},
		{"null is refused", `null`, "not null", false},
		{"a multi-kind context names the kind at fault", `{"kind":"multi","user":{"key":"u1"},"org":{"name":"no key"}}`, `kind "org"`, false},
		{"a multi-kind context whose kind is no object names it", `{"kind":"multi","user":{"key":"u1"},"org":7}`, `kind "org"`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evaluation.ParseContext([]byte(c.body))
			if c.ok {
				if err != nil || got.FullyQualifiedKey() != c.want {
					t.Errorf("context %q, %v; want %q", got.FullyQualifiedKey(), err, c.want)
				}
				return
			}
			if !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want invalid naming %q", err, c.want)
			}
		})
	}
}
