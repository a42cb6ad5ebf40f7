package segmentapi

import (
	"bytes"
	"context"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/segment"
)

// JobsWorker is the worker that runs big segment imports and exports.
const JobsWorker = "big-segment-jobs"

// jobBudget bounds one run of the jobs worker, within the 15 minutes of
// its scheduled function in AWS; a job it leaves is resumed next run.
const jobBudget = 12 * time.Minute

// withBig adds the big segment operations' answers, needs, examples and
// the jobs worker to the group.
func withBig(g app.Group, segments *segment.Service) app.Group {
	for id, a := range bigAnswers() {
		g.Answers[id] = a
	}
	for id, n := range bigNeeds() {
		g.Needs[id] = n
	}
	for id, e := range bigExamples() {
		g.Examples.Calls[id] = e
	}
	g.Workers = append(g.Workers, app.Worker{Name: JobsWorker, Every: 2 * time.Second,
		Run: func(ctx context.Context, _ *slog.Logger) error { return segments.RunJobs(ctx, jobBudget) }})
	return g
}

// bigAnswers, bigNeeds and bigExamples are the big segment operations'
// entries of the group (bigsegments.go).
func bigAnswers() map[string]api.Answer {
	ok := func(rep any) api.Answer { return api.Answer{Status: http.StatusOK, Rep: rep} }
	return map[string]api.Answer{
		"updateBigSegmentTargets":                   {Status: http.StatusNoContent},
		"updateBigSegmentContextTargets":            {Status: http.StatusNoContent},
		"getSegmentMembershipForUser":               ok(bigSegmentTargetRep{}),
		"getSegmentMembershipForContext":            ok(bigSegmentTargetRep{}),
		"createBigSegmentImport":                    {Status: http.StatusNoContent},
		"getBigSegmentImport":                       ok(importRep{}),
		"createBigSegmentExport":                    {Status: http.StatusOK},
		"getBigSegmentExport":                       ok(exportRep{}),
		"getContextInstanceSegmentsMembershipByEnv": ok(membershipsRep{}),
	}
}

func bigNeeds() map[string]api.Needs {
	return map[string]api.Needs{
		"updateBigSegmentTargets":        targetsNeeds,
		"updateBigSegmentContextTargets": targetsNeeds,
	}
}

func bigExamples() map[string]example.Example {
	return map[string]example.Example{
		"updateBigSegmentTargets": func(w *example.World) example.Call {
			key := exampleSegment(w, "big-users", true)
			return example.Post(segment.Href(w.Project, "production", key)+"/users",
				map[string]any{"included": map[string]any{"add": []string{"user-1", "user-2"}}, "excluded": map[string]any{"add": []string{"user-3"}}})
		},
		"updateBigSegmentContextTargets": func(w *example.World) example.Call {
			key := exampleOrgSegment(w)
			return example.Post(segment.Href(w.Project, "production", key)+"/contexts",
				map[string]any{"included": map[string]any{"add": []string{"org-2"}, "remove": []string{"org-1"}}})
		},
		"getSegmentMembershipForUser": func(w *example.World) example.Call {
			key := exampleBigSegment(w)
			return example.Get(segment.Href(w.Project, "production", key) + "/users/user-1")
		},
		"getSegmentMembershipForContext": func(w *example.World) example.Call {
			key := exampleOrgSegment(w)
			return example.Get(segment.Href(w.Project, "production", key) + "/contexts/org-1")
		},
		"createBigSegmentImport": func(w *example.World) example.Call {
			key := exampleSegment(w, "big-import", true)
			body, ct := importBody("merge", "key\nuser-1\nuser-2\n")
			return example.Call{Path: segment.Href(w.Project, "production", key) + "/imports", Body: body, Headers: []string{"Content-Type", ct}}
		},
		"getBigSegmentImport": func(w *example.World) example.Call {
			key := exampleSegment(w, "big-imported", true)
			body, ct := importBody("replace", "user-1\nuser-2\n")
			loc := location(w, segment.Href(w.Project, "production", key)+"/imports", body, ct, http.StatusNoContent)
			w.RunWorker(JobsWorker)
			return example.Get(loc)
		},
		"createBigSegmentExport": func(w *example.World) example.Call {
			return example.Post(segment.Href(w.Project, "production", exampleBigSegment(w))+"/exports", nil)
		},
		"getBigSegmentExport": func(w *example.World) example.Call {
			loc := location(w, segment.Href(w.Project, "production", exampleBigSegment(w))+"/exports", "", "", http.StatusOK)
			w.RunWorker(JobsWorker)
			return example.Get(loc)
		},
		"getContextInstanceSegmentsMembershipByEnv": func(w *example.World) example.Call {
			exampleSegment(w, "evaluated", false)
			exampleBigSegment(w)
			return example.Post(example.EnvPath(w.Project, "production")+"/segments/evaluate",
				map[string]any{"kind": "user", "key": "user-1", "email": "sandy@example.com"})
		},
	}
}

// exampleBigSegment is a big segment of users including user-1 and
// excluding user-3.
func exampleBigSegment(w *example.World) string {
	key := exampleSegment(w, "big", true)
	w.Must(http.StatusNoContent, http.MethodPost, segment.Href(w.Project, "production", key)+"/users",
		map[string]any{"included": map[string]any{"add": []string{"user-1"}}, "excluded": map[string]any{"add": []string{"user-3"}}})
	return key
}

// exampleOrgSegment is a big segment of organizations including org-1.
func exampleOrgSegment(w *example.World) string {
	key := w.Unique("big-orgs")
	w.Must(http.StatusCreated, http.MethodPost, segment.CollectionHref(w.Project, "production"),
		map[string]any{"key": key, "name": "Organizations " + key, "unbounded": true, "unboundedContextKind": "organization"})
	w.Must(http.StatusNoContent, http.MethodPost, segment.Href(w.Project, "production", key)+"/contexts",
		map[string]any{"included": map[string]any{"add": []string{"org-1"}}})
	return key
}

// importBody is a multipart import of csv in mode, and its Content-Type.
func importBody(mode, csv string) (string, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("mode", mode)
	f, _ := mw.CreateFormFile("file", "keys.csv")
	_, _ = f.Write([]byte(csv))
	_ = mw.Close()
	return buf.String(), mw.FormDataContentType()
}

// location makes a POST that must answer status and returns its Location
// (the import or export it started), which World.Must does not show.
func location(w *example.World, path, body, contentType string, status int) string {
	req, err := http.NewRequest(http.MethodPost, w.URL+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", w.Token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	if res.StatusCode != status || res.Header.Get("Location") == "" {
		panic("POST " + path + ": " + res.Status + ", no Location")
	}
	return res.Header.Get("Location")
}
