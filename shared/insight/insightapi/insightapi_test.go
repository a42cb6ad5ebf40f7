package insightapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/insight"
)

const (
	base = "/api/v2/engineering-insights"
	proj = "shop"
	env  = "production"
	flag = "checkout"
)

var beta = []string{"SVC-API-Version", "beta"}

type fixture struct {
	srv    *apptest.Server
	sdkKey string
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	srv := apptest.New(tb)
	srv.MustCreateProject(tb, proj)
	res := srv.Do(tb, http.MethodPost, "/api/v2/flags/"+proj, map[string]any{"key": flag, "name": "Checkout", "temporary": false,
		"variations": []any{map[string]any{"value": "old"}, map[string]any{"value": "new"}}})
	want(tb, res, http.StatusCreated)
	e := srv.Do(tb, http.MethodGet, "/api/v2/projects/"+proj+"/environments/"+env, nil)
	want(tb, e, http.StatusOK)
	return &fixture{srv: srv, sdkKey: e.Map(tb)["apiKey"].(string)}
}

func want(tb testing.TB, res *apptest.Response, status int) {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

func (f *fixture) do(tb testing.TB, method, path string, body any) *apptest.Response {
	tb.Helper()
	return f.srv.Do(tb, method, path, body, beta...)
}

// evaluate posts an SDK summary event: count evaluations of variation at time at.
func (f *fixture) evaluate(tb testing.TB, variation, count int, at int64) {
	tb.Helper()
	events := fmt.Sprintf(`[{"kind":"summary","startDate":%[1]d,"endDate":%[1]d,"features":{%[2]q:{"counters":[{"variation":%[3]d,"version":1,"value":"x","count":%[4]d}]}}}]`,
		at, flag, variation, count)
	res := f.srv.Do(tb, http.MethodPost, "/bulk", events, "Authorization", f.sdkKey, "X-LaunchDarkly-Tags", "application-id/web application-version/1.0")
	want(tb, res, http.StatusAccepted)
}

func (f *fixture) deploy(tb testing.TB, app, version, event string, at int64) {
	tb.Helper()
	res := f.do(tb, http.MethodPost, base+"/deployment-events", map[string]any{"projectKey": proj, "environmentKey": env,
		"applicationKey": app, "version": version, "eventType": event, "eventTime": at})
	want(tb, res, http.StatusCreated)
}

func (f *fixture) turnOn(tb testing.TB) {
	tb.Helper()
	res := f.srv.Do(tb, http.MethodPatch, "/api/v2/flags/"+proj+"/"+flag, map[string]any{"environmentKey": env,
		"instructions": []any{map[string]any{"kind": "turnFlagOn"}}}, "Content-Type", "application/json; domain-model=launchdarkly.semanticpatch")
	want(tb, res, http.StatusOK)
}

func (f *fixture) flagEvents(tb testing.TB, extra string) map[string]any {
	tb.Helper()
	res := f.do(tb, http.MethodGet, base+"/flag-events?projectKey="+proj+"&environmentKey="+env+extra, nil)
	want(tb, res, http.StatusOK)
	return res.Map(tb)
}

func items(m map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestDeploymentEventsBuildDeployments(t *testing.T) {
	f := newFixture(t)
	start := time.Now().Add(-2 * time.Hour).UnixMilli()
	f.deploy(t, "web", "1.0", "started", start)
	f.deploy(t, "web", "1.0", "finished", start+10*60*1000)
	id := insight.DeploymentID(proj, env, "web", "1.0")

	t.Run("a started then finished version is one finished, active deployment", func(t *testing.T) {
		res := f.do(t, http.MethodGet, base+"/deployments/"+id, nil)
		want(t, res, http.StatusOK)
		d := res.Map(t)
		if d["status"] != "finished" || d["active"] != true || d["durationMs"] != float64(10*60*1000) || d["startedAt"] != float64(start) {
			t.Errorf("deployment: %s", res.Body)
		}
	})
	t.Run("a retried event changes nothing", func(t *testing.T) {
		before := f.do(t, http.MethodGet, "/api/v2/auditlog?q=deployment&limit=20", nil).Map(t)
		f.deploy(t, "web", "1.0", "finished", start+10*60*1000)
		after := f.do(t, http.MethodGet, "/api/v2/auditlog?q=deployment&limit=20", nil).Map(t)
		if len(items(before)) != len(items(after)) {
			t.Errorf("the retry wrote an audit entry: %d then %d", len(items(before)), len(items(after)))
		}
	})
	t.Run("the next finished version becomes active and the last one stops being", func(t *testing.T) {
		f.deploy(t, "web", "1.1", "started", start+20*60*1000)
		f.deploy(t, "web", "1.1", "finished", start+30*60*1000)
		if d := f.do(t, http.MethodGet, base+"/deployments/"+id, nil).Map(t); d["active"] != false {
			t.Errorf("1.0 still active: %v", d)
		}
		if d := f.do(t, http.MethodGet, base+"/deployments/"+insight.DeploymentID(proj, env, "web", "1.1"), nil).Map(t); d["active"] != true {
			t.Errorf("1.1 not active: %v", d)
		}
	})
	t.Run("the list filters by status and application and pages with after", func(t *testing.T) {
		f.deploy(t, "api", "7", "failed", start+40*60*1000)
		all := f.do(t, http.MethodGet, base+"/deployments?projectKey="+proj+"&environmentKey="+env, nil).Map(t)
		if all["totalCount"] != float64(3) || items(all)[0]["applicationKey"] != "api" {
			t.Errorf("list: %v", all)
		}
		failed := f.do(t, http.MethodGet, base+"/deployments?projectKey="+proj+"&environmentKey="+env+"&status=failed", nil).Map(t)
		if failed["totalCount"] != float64(1) {
			t.Errorf("failed filter: %v", failed)
		}
		web := f.do(t, http.MethodGet, base+"/deployments?projectKey="+proj+"&environmentKey="+env+"&applicationKey=web&limit=1", nil).Map(t)
		if web["totalCount"] != float64(2) || len(items(web)) != 1 || items(web)[0]["applicationVersion"] != "1.1" {
			t.Fatalf("first page: %v", web)
		}
		next := web["_links"].(map[string]any)["next"].(map[string]any)["href"].(string)
		page2 := f.do(t, http.MethodGet, next, nil).Map(t)
		if len(items(page2)) != 1 || items(page2)[0]["applicationVersion"] != "1.0" {
			t.Errorf("second page: %v", page2)
		}
		if _, ok := page2["_links"].(map[string]any)["next"]; ok {
			t.Errorf("a next link after the last page: %v", page2["_links"])
		}
		prev := page2["_links"].(map[string]any)["prev"].(map[string]any)["href"].(string)
		back := f.do(t, http.MethodGet, prev, nil).Map(t)
		if len(items(back)) != 1 || items(back)[0]["applicationVersion"] != "1.1" {
			t.Errorf("the page before: %v", back)
		}
	})
	t.Run("a JSON patch sets the status and archives", func(t *testing.T) {
		res := f.do(t, http.MethodPatch, base+"/deployments/"+id, []any{
			map[string]any{"op": "replace", "path": "/status", "value": "failed"},
			map[string]any{"op": "replace", "path": "/archived", "value": true}})
		want(t, res, http.StatusOK)
		if d := res.Map(t); d["status"] != "failed" || d["archived"] != true {
			t.Errorf("patched: %v", d)
		}
		res = f.do(t, http.MethodPatch, base+"/deployments/"+id, []any{map[string]any{"op": "replace", "path": "/applicationKey", "value": "x"}})
		want(t, res, http.StatusBadRequest)
	})

	refused := []struct {
		name string
		body map[string]any
		code int
	}{
		{"an unknown event type", map[string]any{"projectKey": proj, "environmentKey": env, "applicationKey": "web", "version": "1", "eventType": "done"}, http.StatusBadRequest},
		{"no version", map[string]any{"projectKey": proj, "environmentKey": env, "applicationKey": "web", "eventType": "started"}, http.StatusBadRequest},
		{"an event time as text", map[string]any{"projectKey": proj, "environmentKey": env, "applicationKey": "web", "version": "1", "eventType": "started", "eventTime": "soon"}, http.StatusBadRequest},
		{"an environment that does not exist", map[string]any{"projectKey": proj, "environmentKey": "nope", "applicationKey": "web", "version": "1", "eventType": "started"}, http.StatusNotFound},
	}
	for _, c := range refused {
		t.Run("an event with "+c.name+" is refused", func(t *testing.T) {
			want(t, f.do(t, http.MethodPost, base+"/deployment-events", c.body), c.code)
		})
	}
	t.Run("an event time may be a string of digits", func(t *testing.T) {
		at := strconv.FormatInt(start-1000, 10)
		want(t, f.do(t, http.MethodPost, base+"/deployment-events", map[string]any{"projectKey": proj, "environmentKey": env,
			"applicationKey": "cli", "version": "3", "eventType": "started", "eventTime": at}), http.StatusCreated)
		d := f.do(t, http.MethodGet, base+"/deployments/"+insight.DeploymentID(proj, env, "cli", "3"), nil).Map(t)
		if d["startedAt"] != float64(start-1000) {
			t.Errorf("startedAt %v, want %s", d["startedAt"], at)
		}
	})
	t.Run("an unknown deployment is a 404", func(t *testing.T) {
		want(t, f.do(t, http.MethodGet, base+"/deployments/"+insight.DeploymentID("a", "b", "c", "d"), nil), http.StatusNotFound)
		want(t, f.do(t, http.MethodGet, base+"/deployments/nope", nil), http.StatusNotFound)
	})
}

func TestFlagEventsMeasureTheChangeInEvaluations(t *testing.T) {
	f := newFixture(t)
	f.turnOn(t)
	list := f.flagEvents(t, "&global=exclude")
	evs := items(list)
	if len(evs) != 1 || evs[0]["flagKey"] != flag || evs[0]["eventType"] != insight.EventFlagTargetingChange {
		t.Fatalf("events: %v", list)
	}
	at, _ := strconv.ParseInt(evs[0]["eventTime"].(string), 10, 64)
	impact := evs[0]["impact"].(map[string]any)
	if impact["size"] != "none" || impact["reason"] != insight.ReasonNoEvaluations {
		t.Errorf("impact before any evaluation: %v", impact)
	}

	// The hour before the change served "old" to everyone.
	f.evaluate(t, 0, 40, at-time.Hour.Milliseconds())
	impact = items(f.flagEvents(t, "&global=exclude"))[0]["impact"].(map[string]any)
	if impact["reason"] != insight.ReasonNoneAfter {
		t.Errorf("impact with evaluations only before: %v", impact)
	}

	// After it, one in ten evaluations got "new": a small change.
	f.evaluate(t, 0, 36, at)
	f.evaluate(t, 1, 4, at)
	impact = items(f.flagEvents(t, "&global=exclude"))[0]["impact"].(map[string]any)
	if impact["size"] != "small" || impact["percentage"] != float64(10) {
		t.Errorf("impact after a 10%% shift: %v", impact)
	}
	vars := impact["evaluationsSummary"].(map[string]any)["variations"].([]any)
	if len(vars) != 2 || vars[0].(map[string]any)["value"] != "old" || vars[0].(map[string]any)["before"] != float64(40) ||
		vars[1].(map[string]any)["value"] != "new" || vars[1].(map[string]any)["after"] != float64(4) {
		t.Errorf("evaluations summary: %v", vars)
	}

	// Many more "new" evaluations in the same hour: the change is large.
	f.evaluate(t, 1, 400, at)
	ev := items(f.flagEvents(t, "&global=exclude"))[0]
	if ev["impact"].(map[string]any)["size"] != "large" {
		t.Errorf("impact after most evaluations moved: %v", ev["impact"])
	}
	if ev["member"] == nil || ev["auditLogEntryId"] != ev["id"] || ev["projectId"] == "" || ev["environmentId"] == "" {
		t.Errorf("event fields: %v", ev)
	}

	t.Run("filters keep what they name", func(t *testing.T) {
		cases := []struct {
			query string
			n     int
		}{
			{"&impactSize=large&global=exclude", 1},
			{"&impactSize=small", 0},
			{"&query=check", 2}, // the change, and the flag's creation (a global event)
			{"&query=nothing", 0},
			{"&global=exclude", 1},
			{"&hasExperiments=true", 0},
			{"&applicationKey=web", 2},
			{"&applicationKey=other", 0},
			{"&to=" + strconv.FormatInt(at-1, 10), 1}, // only the creation
		}
		for _, c := range cases {
			if got := len(items(f.flagEvents(t, c.query))); got != c.n {
				t.Errorf("%s: %d events, want %d", c.query, got, c.n)
			}
		}
	})
	t.Run("expand=experiments answers an empty list", func(t *testing.T) {
		ev := items(f.flagEvents(t, "&expand=experiments"))[0]
		exp := ev["experiments"].(map[string]any)
		if exp["totalCount"] != float64(0) || len(exp["items"].([]any)) != 0 {
			t.Errorf("experiments: %v", exp)
		}
	})
	t.Run("pages follow after", func(t *testing.T) {
		first := f.flagEvents(t, "&limit=1")
		if first["totalCount"] != float64(2) || len(items(first)) != 1 {
			t.Fatalf("first page: %v", first)
		}
		next := first["_links"].(map[string]any)["next"].(map[string]any)["href"].(string)
		res := f.do(t, http.MethodGet, next, nil)
		want(t, res, http.StatusOK)
		second := items(res.Map(t))
		if len(second) != 1 || second[0]["eventType"] != insight.EventFlagCreated {
			t.Errorf("second page: %s", res.Body)
		}
	})
	t.Run("bad parameters are refused", func(t *testing.T) {
		for _, q := range []string{"&limit=101", "&limit=0", "&impactSize=huge", "&global=maybe", "&expand=pullRequests", "&after=zz", "&from=10&to=5"} {
			res := f.do(t, http.MethodGet, base+"/flag-events?projectKey="+proj+"&environmentKey="+env+q, nil)
			want(t, res, http.StatusBadRequest)
		}
		want(t, f.do(t, http.MethodGet, base+"/flag-events?projectKey="+proj, nil), http.StatusBadRequest)
		want(t, f.do(t, http.MethodGet, base+"/flag-events?projectKey=nope&environmentKey="+env, nil), http.StatusNotFound)
	})
}

func scores(tb testing.TB, f *fixture, extra string) map[string]any {
	tb.Helper()
	res := f.do(tb, http.MethodGet, base+"/insights/scores?projectKey="+proj+"&environmentKey="+env+extra, nil)
	want(tb, res, http.StatusOK)
	return res.Map(tb)["scores"].(map[string]any)
}

func metric(m map[string]any, name string) (score float64, indicator string) {
	s := m[name].(map[string]any)
	return s["score"].(float64), s["indicator"].(string)
}

func TestScoresFollowTheData(t *testing.T) {
	f := newFixture(t)
	sc := scores(t, f, "")
	for _, name := range []string{"deploymentFrequency", "deploymentFailureRate", "leadTime", "impactSize", "experimentationCoverage"} {
		if _, ind := metric(sc, name); ind != insight.IndicatorNotCalculated {
			t.Errorf("%s before any data: %v", name, sc[name])
		}
	}
	if s, _ := metric(sc, "flagHealth"); s != 0 {
		t.Errorf("flag health with an unevaluated flag: %v", sc["flagHealth"])
	}

	now := time.Now()
	t.Run("deployments make the deployment scores", func(t *testing.T) {
		for i := range 15 {
			at := now.Add(-time.Duration(i+1) * 24 * time.Hour).UnixMilli()
			v := "v" + strconv.Itoa(i)
			f.deploy(t, "web", v, "started", at)
			f.deploy(t, "web", v, "finished", at+30*60*1000)
		}
		sc := scores(t, f, "")
		if s, _ := metric(sc, "deploymentFrequency"); s != 50 { // 15 in 30 days: one every other day
			t.Errorf("frequency: %v", sc["deploymentFrequency"])
		}
		if s, ind := metric(sc, "deploymentFailureRate"); s != 100 || ind != insight.IndicatorExcellent {
			t.Errorf("failure rate: %v", sc["deploymentFailureRate"])
		}
		if s, _ := metric(sc, "leadTime"); s != 100 {
			t.Errorf("lead time of half-hour deployments: %v", sc["leadTime"])
		}
		velocity := sc["velocity"].(map[string]any)
		if velocity["score"] != float64(75) || len(velocity["aggregateOf"].([]any)) != 2 {
			t.Errorf("velocity: %v", velocity)
		}
	})
	t.Run("a failed deployment lowers the failure-rate score", func(t *testing.T) {
		at := now.Add(-time.Hour).UnixMilli()
		for i := range 5 {
			f.deploy(t, "web", "bad"+strconv.Itoa(i), "started", at)
			f.deploy(t, "web", "bad"+strconv.Itoa(i), "failed", at+1000)
		}
		sc := scores(t, f, "")
		if s, _ := metric(sc, "deploymentFailureRate"); s != 75 { // 5 of 20 failed
			t.Errorf("failure rate: %v", sc["deploymentFailureRate"])
		}
		if sc["deploymentFailureRate"].(map[string]any)["diffVsLastPeriod"] != float64(0) {
			t.Errorf("a diff against a last period without deployments: %v", sc["deploymentFailureRate"])
		}
	})
	t.Run("other applications' deployments are left out", func(t *testing.T) {
		sc := scores(t, f, "&applicationKey=api")
		if _, ind := metric(sc, "deploymentFrequency"); ind != insight.IndicatorNotCalculated {
			t.Errorf("frequency of an application without deployments: %v", sc["deploymentFrequency"])
		}
	})
	t.Run("evaluations make the flag healthy", func(t *testing.T) {
		f.evaluate(t, 0, 5, time.Now().UnixMilli())
		sc := scores(t, f, "")
		if s, _ := metric(sc, "flagHealth"); s != 100 {
			t.Errorf("flag health: %v", sc["flagHealth"])
		}
	})
	t.Run("the last period's scores give the diff", func(t *testing.T) {
		at := now.Add(-40 * 24 * time.Hour).UnixMilli()
		for i := range 4 {
			f.deploy(t, "web", "old"+strconv.Itoa(i), "started", at)
			f.deploy(t, "web", "old"+strconv.Itoa(i), "finished", at+1000)
		}
		fr := scores(t, f, "")["deploymentFailureRate"].(map[string]any)
		last := fr["lastPeriod"].(map[string]any)
		if last["score"] != float64(100) || fr["diffVsLastPeriod"] != float64(-25) {
			t.Errorf("failure rate against the last period: %v", fr)
		}
	})
	t.Run("a group's scores answer with string periods", func(t *testing.T) {
		res := f.do(t, http.MethodPost, base+"/insights/group", map[string]any{"key": "web", "name": "Web", "projectKey": proj, "environmentKey": env, "applicationKeys": []string{"web"}})
		want(t, res, http.StatusCreated)
		g := f.do(t, http.MethodGet, base+"/insights/groups/web?expand=scores,environment", nil).Map(t)
		md := g["scoreMetadata"].(map[string]any)["period"].(map[string]any)
		if _, ok := md["startTime"].(string); !ok {
			t.Errorf("scoreMetadata: %v", g["scoreMetadata"])
		}
		if s, _ := metric(g["scores"].(map[string]any), "deploymentFailureRate"); s != 75 {
			t.Errorf("group scores: %v", g["scores"])
		}
		if g["environment"].(map[string]any)["key"] != env {
			t.Errorf("environment: %v", g["environment"])
		}
	})
}

func TestInsightGroups(t *testing.T) {
	f := newFixture(t)
	body := func(key, name string) map[string]any {
		return map[string]any{"key": key, "name": name, "projectKey": proj, "environmentKey": env}
	}
	res := f.do(t, http.MethodPost, base+"/insights/group", body("checkout-team", "Checkout team"))
	want(t, res, http.StatusCreated)
	g := res.Map(t)
	if g["applicationKeys"] == nil || len(g["applicationKeys"].([]any)) != 0 {
		t.Errorf("no application keys means all: %v", g)
	}
	if _, ok := g["createdAt"].(string); !ok {
		t.Errorf("createdAt: %v", g["createdAt"])
	}
	want(t, f.do(t, http.MethodPost, base+"/insights/group", body("checkout-team", "Again")), http.StatusConflict)
	want(t, f.do(t, http.MethodPost, base+"/insights/group", body("growth", "Growth")), http.StatusCreated)

	refused := []struct {
		name string
		body map[string]any
	}{
		{"no name", body("x", "")},
		{"a bad key", body("no spaces", "X")},
		{"an unknown environment", map[string]any{"key": "x", "name": "X", "projectKey": proj, "environmentKey": "nope"}},
		{"application keys that are not keys", map[string]any{"key": "x", "name": "X", "projectKey": proj, "environmentKey": env, "applicationKeys": []string{"a b"}}},
	}
	for _, c := range refused {
		t.Run("a group with "+c.name+" is refused", func(t *testing.T) {
			want(t, f.do(t, http.MethodPost, base+"/insights/group", c.body), http.StatusBadRequest)
		})
	}
	t.Run("the list filters by name, sorts and pages", func(t *testing.T) {
		l := f.do(t, http.MethodGet, base+"/insights/groups?query=CHECK", nil).Map(t)
		if l["totalCount"] != float64(1) || items(l)[0]["key"] != "checkout-team" {
			t.Errorf("query: %v", l)
		}
		l = f.do(t, http.MethodGet, base+"/insights/groups?sort=-name&limit=1&expand=metadata", nil).Map(t)
		if l["totalCount"] != float64(2) || items(l)[0]["key"] != "growth" {
			t.Errorf("sorted: %v", l)
		}
		c := l["metadata"].(map[string]any)["countByIndicator"].(map[string]any)
		if c["total"] != float64(2) {
			t.Errorf("countByIndicator: %v", c)
		}
		want(t, f.do(t, http.MethodGet, base+"/insights/groups?limit=21", nil), http.StatusBadRequest)
		want(t, f.do(t, http.MethodGet, base+"/insights/groups?sort=key", nil), http.StatusBadRequest)
	})
	t.Run("a patch renames and scopes applications", func(t *testing.T) {
		res := f.do(t, http.MethodPatch, base+"/insights/groups/growth", []any{
			map[string]any{"op": "replace", "path": "/name", "value": "Growth squad"},
			map[string]any{"op": "replace", "path": "/applicationKeys", "value": []string{"web", "web"}}})
		want(t, res, http.StatusOK)
		if g := res.Map(t); g["name"] != "Growth squad" || len(g["applicationKeys"].([]any)) != 1 {
			t.Errorf("patched: %v", g)
		}
		want(t, f.do(t, http.MethodPatch, base+"/insights/groups/growth", []any{map[string]any{"op": "replace", "path": "/createdAt", "value": 1}}), http.StatusBadRequest)
		want(t, f.do(t, http.MethodPatch, base+"/insights/groups/nope", []any{map[string]any{"op": "replace", "path": "/name", "value": "x"}}), http.StatusNotFound)
	})
	t.Run("a deleted group is gone", func(t *testing.T) {
		want(t, f.do(t, http.MethodDelete, base+"/insights/groups/growth", nil), http.StatusNoContent)
		want(t, f.do(t, http.MethodGet, base+"/insights/groups/growth", nil), http.StatusNotFound)
		want(t, f.do(t, http.MethodDelete, base+"/insights/groups/growth", nil), http.StatusNotFound)
	})
}

func TestRepositoriesAndCodeReferences(t *testing.T) {
	f := newFixture(t)
	res := f.do(t, http.MethodPut, base+"/repositories/projects", map[string]any{"mappings": []any{map[string]any{"repositoryKey": "nope", "projectKey": proj}}})
	want(t, res, http.StatusNotFound)
	want(t, f.do(t, http.MethodPut, base+"/repositories/projects", map[string]any{"mappings": []any{}}), http.StatusBadRequest)
	want(t, f.do(t, http.MethodDelete, base+"/repositories/nope/projects/"+proj, nil), http.StatusNotFound)

	want(t, f.srv.Do(t, http.MethodPost, "/api/v2/code-refs/repositories", map[string]any{"name": "shop-web", "sourceLink": "https://git.example.com/shop-web"}), http.StatusOK)
	want(t, f.do(t, http.MethodPut, base+"/repositories/projects", map[string]any{"mappings": []any{map[string]any{"repositoryKey": "nope", "projectKey": proj},
		map[string]any{"repositoryKey": "shop-web", "projectKey": proj}}}), http.StatusNotFound)
	res = f.do(t, http.MethodPut, base+"/repositories/projects", map[string]any{"mappings": []any{map[string]any{"repositoryKey": "shop-web", "projectKey": proj}}})
	want(t, res, http.StatusOK)
	if m := res.Map(t); m["totalCount"] != float64(1) {
		t.Errorf("mappings: %v", m)
	}
	list := f.do(t, http.MethodGet, base+"/repositories?expand=projects", nil).Map(t)
	repos := items(list)
	if len(repos) != 1 || repos[0]["key"] != "shop-web" || repos[0]["url"] != "https://git.example.com/shop-web" ||
		repos[0]["projects"].(map[string]any)["items"].([]any)[0].(map[string]any)["key"] != proj {
		t.Fatalf("repositories: %v", list)
	}

	t.Run("a mapped repository without the flag's references makes the flag unhealthy", func(t *testing.T) {
		f.evaluate(t, 0, 5, time.Now().UnixMilli())
		if s, _ := metric(scores(t, f, ""), "flagHealth"); s != 0 {
			t.Errorf("flag health of an unreferenced flag: %v", s)
		}
		hunk := map[string]any{"startingLineNumber": 1, "lines": "checkout()", "projKey": proj, "flagKey": flag}
		want(t, f.srv.Do(t, http.MethodPut, "/api/v2/code-refs/repositories/shop-web/branches/main", map[string]any{"name": "main", "head": "c1",
			"syncTime": time.Now().UnixMilli(), "references": []any{map[string]any{"path": "app.js", "hunks": []any{hunk}}}}), http.StatusOK)
		if s, _ := metric(scores(t, f, ""), "flagHealth"); s != 100 {
			t.Errorf("flag health once referenced: %v", s)
		}
	})
	t.Run("an unmapped repository no longer lists the project", func(t *testing.T) {
		want(t, f.do(t, http.MethodDelete, base+"/repositories/shop-web/projects/"+proj, nil), http.StatusNoContent)
		want(t, f.do(t, http.MethodDelete, base+"/repositories/shop-web/projects/"+proj, nil), http.StatusNotFound)
		list := f.do(t, http.MethodGet, base+"/repositories?expand=projects", nil).Map(t)
		if n := items(list)[0]["projects"].(map[string]any)["totalCount"]; n != float64(0) {
			t.Errorf("projects after the unmapping: %v", list)
		}
	})
}

func TestConcurrentEventsOfOneDeploymentAllLand(t *testing.T) {
	f := newFixture(t)
	start := time.Now().Add(-time.Hour).UnixMilli()
	done := make(chan int, 8)
	for i := range 8 {
		go func() {
			event := "started"
			if i%2 == 1 {
				event = "finished"
			}
			res := f.do(t, http.MethodPost, base+"/deployment-events", map[string]any{"projectKey": proj, "environmentKey": env,
				"applicationKey": "web", "version": "2.0", "eventType": event, "eventTime": start + int64(i%2)*60_000})
			done <- res.Status
		}()
	}
	for range 8 {
		if status := <-done; status != http.StatusCreated {
			t.Errorf("an event answered %d", status)
		}
	}
	d := f.do(t, http.MethodGet, base+"/deployments/"+insight.DeploymentID(proj, env, "web", "2.0"), nil).Map(t)
	if d["status"] != "finished" || d["startedAt"] != float64(start) || d["endedAt"] != float64(start+60_000) || d["active"] != true {
		t.Errorf("deployment after concurrent events: %v", d)
	}
}

func TestAGroupsEnvironmentShowsItsKeysOnlyToWhoMayReadIt(t *testing.T) {
	f := newFixture(t)
	want(t, f.do(t, http.MethodPost, base+"/insights/group", map[string]any{"key": "g", "name": "G", "projectKey": proj, "environmentKey": env}), http.StatusCreated)
	want(t, f.srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": "insights-only", "name": "Insights only", "basePermissions": "no_access",
		"policy": []any{map[string]any{"effect": "allow", "resources": []string{"insight-group/*"}, "actions": []string{"*"}}}}), http.StatusCreated)
	_, limited := f.srv.MustCreateToken(t, map[string]any{"name": "insights only", "customRoleIds": []string{"insights-only"}})
	read := func(token string) map[string]any {
		res := f.srv.Do(t, http.MethodGet, base+"/insights/groups/g?expand=environment", nil, "Authorization", token, "SVC-API-Version", "beta")
		want(t, res, http.StatusOK)
		return res.Map(t)["environment"].(map[string]any)
	}
	if e := read(f.srv.Token); e["apiKey"] != f.sdkKey {
		t.Errorf("the admin sees apiKey %v", e["apiKey"])
	}
	if e := read(limited); e["apiKey"] != "" || e["mobileKey"] != "" || e["key"] != env {
		t.Errorf("a caller who may not read the environment sees %v", e)
	}
}

func TestMappingsNeedTheRightOnEachProject(t *testing.T) {
	f := newFixture(t)
	f.srv.MustCreateProject(t, "other")
	want(t, f.srv.Do(t, http.MethodPost, "/api/v2/code-refs/repositories", map[string]any{"name": "mono"}), http.StatusOK)
	want(t, f.srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": "shop-repos", "name": "Shop repositories",
		"policy": []any{map[string]any{"effect": "allow", "resources": []string{"proj/" + proj + ":insight-repository/*"}, "actions": []string{"*"}}}}), http.StatusCreated)
	_, token := f.srv.MustCreateToken(t, map[string]any{"name": "shop repos", "customRoleIds": []string{"shop-repos"}})
	put := func(body any) *apptest.Response {
		return f.srv.Do(t, http.MethodPut, base+"/repositories/projects", body, "Authorization", token, "SVC-API-Version", "beta")
	}
	mapping := func(project string) map[string]any {
		return map[string]any{"repositoryKey": "mono", "projectKey": project}
	}
	want(t, put(map[string]any{"mappings": []any{mapping(proj)}}), http.StatusOK)
	want(t, put(map[string]any{"mappings": []any{mapping(proj), mapping("other")}}), http.StatusForbidden)
	want(t, put("not json"), http.StatusForbidden) // judged by the operation's own right first
	want(t, f.do(t, http.MethodPut, base+"/repositories/projects", "not json"), http.StatusBadRequest)
	res := f.srv.Do(t, http.MethodDelete, base+"/repositories/mono/projects/other", nil, "Authorization", token, "SVC-API-Version", "beta")
	want(t, res, http.StatusForbidden)
}
