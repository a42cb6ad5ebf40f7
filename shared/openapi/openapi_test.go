package openapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// The representations of the tests' own operations.
type (
	link struct {
		Href string `json:"href"`
		Type string `json:"type,omitempty"`
	}
	base struct {
		Links   map[string]link `json:"_links"`
		Version int             `json:"_version"`
	}
	extra struct {
		Note string `json:"note"`
	}
	widget struct {
		base
		*extra
		Key       string               `json:"key"`
		Name      string               `json:"name,omitempty"`
		Tags      []string             `json:"tags"`
		Parts     []*widget            `json:"parts,omitempty"`
		Owner     *link                `json:"owner"`
		Created   jsondoc.MillisString `json:"creationDate"`
		Updated   time.Time            `json:"updated"`
		Count     int64                `json:"count,string"`
		Ratio     float64              `json:"ratio"`
		On        bool                 `json:"on"`
		Config    json.RawMessage      `json:"config"`
		Value     any                  `json:"value"`
		Hidden    string               `json:"-"`
		Untagged  string
		private   string
		Anonymous struct {
			Inner jsondoc.Millis `json:"inner"`
		} `json:"anonymous"`
	}
	oauthError struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}
	page struct {
		Items      []widget `json:"items"`
		TotalCount int      `json:"totalCount"`
	}
)

var testOps = []catalog.Operation{
	{ID: "getWidgets", Group: "widgets", Method: "GET", Path: "/api/v2/widgets/{projectKey}"},
	{ID: "postWidget", Group: "widgets", Method: "POST", Path: "/api/v2/widgets/{projectKey}", Beta: true},
	{ID: "deleteWidget", Group: "widgets", Method: "DELETE", Path: "/api/v2/widgets/{projectKey}/{widgetKey}"},
	{ID: "patchWidget", Group: "widgets", Method: "PATCH", Path: "/api/v2/widgets/{projectKey}/{widgetKey}"},
	{ID: "getPing", Group: "ping", Method: "GET", Path: "/ping", Public: true},
	{ID: "postToken", Group: "ping", Method: "POST", Path: "/token", Public: true},
	{ID: "reportPing", Group: "ping", Method: "REPORT", Path: "/ping", Public: true},
}

var testAnswers = map[string]api.Answer{
	"getWidgets":   {Status: 200, Rep: page{}, ETag: true},
	"postWidget":   {Status: 201, Rep: widget{}},
	"deleteWidget": {Status: 204},
	"postToken":    {Status: 200, Rep: link{}, Error: oauthError{}},
}

func testDoc(tb testing.TB) *Document {
	tb.Helper()
	d := Build(testOps, testAnswers)
	return &d
}

func TestBuildDescribesTheRepresentation(t *testing.T) {
	d := testDoc(t)
	w := d.Components.Schemas["openapi.widget"]
	if w == nil {
		t.Fatalf("no component schema widget among %v", keys(d.Components.Schemas))
	}
	has := func(name string) *Schema {
		t.Helper()
		s := w.Properties[name]
		if s == nil {
			t.Fatalf("widget has no property %q: %v", name, keys(w.Properties))
		}
		return s
	}
	t.Run("fields without omitempty are required, those with it are not", func(t *testing.T) {
		want := []string{"Untagged", "_links", "_version", "anonymous", "config", "count", "creationDate", "key", "on", "owner", "ratio", "tags", "updated", "value"}
		if strings.Join(w.Required, ",") != strings.Join(want, ",") {
			t.Errorf("required %v, want %v", w.Required, want)
		}
	})
	t.Run("a json:\"-\" field and an unexported one are left out", func(t *testing.T) {
		for _, name := range []string{"Hidden", "-", "private"} {
			if _, ok := w.Properties[name]; ok {
				t.Errorf("property %q is described", name)
			}
		}
	})
	t.Run("an embedded struct's fields are the object's own", func(t *testing.T) {
		has("_links")
		has("_version")
	})
	t.Run("an embedded pointer's fields are there but not required", func(t *testing.T) {
		has("note")
	})
	t.Run("the spec's string timestamps are strings of milliseconds", func(t *testing.T) {
		if s := has("creationDate"); s.Type != "string" || s.Format != FormatUnixMillis {
			t.Errorf("creationDate is %+v", s)
		}
	})
	t.Run("time.Time is a date-time string and jsondoc.Millis an integer", func(t *testing.T) {
		if s := has("updated"); s.Type != "string" || s.Format != "date-time" {
			t.Errorf("updated is %+v", s)
		}
		if s := has("anonymous").Properties["inner"]; s == nil || s.Type != "integer" {
			t.Errorf("anonymous.inner is %+v", s)
		}
	})
	t.Run("raw JSON and interface values are any value", func(t *testing.T) {
		for _, name := range []string{"config", "value"} {
			if s := has(name); s.Type != "" || s.Ref != "" {
				t.Errorf("%s is %+v", name, s)
			}
		}
	})
	t.Run("a ,string number is a string", func(t *testing.T) {
		if s := has("count"); s.Type != "string" {
			t.Errorf("count is %+v", s)
		}
	})
	t.Run("a pointer to a named struct is a nullable reference", func(t *testing.T) {
		s := has("owner")
		if !s.Nullable || len(s.AllOf) != 1 || s.AllOf[0].Ref != "#/components/schemas/openapi.link" {
			t.Errorf("owner is %+v", s)
		}
	})
	t.Run("a slice without omitempty may be null, one with it may not", func(t *testing.T) {
		if s := has("tags"); s.Type != "array" || !s.Nullable || s.Items.Type != "string" {
			t.Errorf("tags is %+v", s)
		}
		if s := has("parts"); s.Nullable || s.Items.AllOf[0].Ref != "#/components/schemas/openapi.widget" {
			t.Errorf("parts is %+v", s)
		}
	})
}

func TestBuildDescribesTheOperations(t *testing.T) {
	d := testDoc(t)
	t.Run("each {param} is a required string path parameter", func(t *testing.T) {
		op := d.Paths["/api/v2/widgets/{projectKey}/{widgetKey}"]["delete"]
		if len(op.Parameters) != 2 || op.Parameters[1].Name != "widgetKey" || op.Parameters[1].In != "path" || !op.Parameters[1].Required {
			t.Errorf("parameters %+v", op.Parameters)
		}
	})
	t.Run("a public operation takes no token and the others the document's", func(t *testing.T) {
		if op := d.Paths["/ping"]["get"]; op.Security == nil || len(*op.Security) != 0 {
			t.Errorf("getPing security %v", op.Security)
		}
		if op := d.Paths["/api/v2/widgets/{projectKey}"]["get"]; op.Security != nil {
			t.Errorf("getWidgets security %v", *op.Security)
		}
	})
	t.Run("a beta operation requires the beta header", func(t *testing.T) {
		op := d.Paths["/api/v2/widgets/{projectKey}"]["post"]
		last := op.Parameters[len(op.Parameters)-1]
		if last.Name != api.BetaHeader || last.In != "header" || !last.Required || !strings.Contains(op.Description, "beta") {
			t.Errorf("postWidget: %+v, %q", op.Parameters, op.Description)
		}
	})
	t.Run("an operation without an answer has a 2XX without a schema", func(t *testing.T) {
		op := d.Paths["/api/v2/widgets/{projectKey}/{widgetKey}"]["patch"]
		if r := op.Responses["2XX"]; r == nil || r.Content != nil {
			t.Errorf("patchWidget responses %v", keys(op.Responses))
		}
	})
	t.Run("an answer without a representation has no body", func(t *testing.T) {
		if r := d.Paths["/api/v2/widgets/{projectKey}/{widgetKey}"]["delete"].Responses["204"]; r == nil || r.Content != nil {
			t.Errorf("deleteWidget 204 is %+v", r)
		}
	})
	t.Run("a method OpenAPI has no field for is an extension of the path item", func(t *testing.T) {
		item := d.Paths["/ping"]
		if item["x-report"] == nil || item["report"] != nil || item["get"] == nil {
			t.Errorf("/ping has %v", keys(item))
		}
	})
	t.Run("the summary reads the operation id as words", func(t *testing.T) {
		for id, want := range map[string]string{"getSDKLatestAll": "Get SDK latest all", "postWidget": "Post widget", "GetReleasePolicies": "Get release policies"} {
			if got := summary(id); got != want {
				t.Errorf("summary(%q) = %q, want %q", id, got, want)
			}
		}
	})
}

func TestBuildIsDeterministic(t *testing.T) {
	first, err := Marshal(Build(testOps, testAnswers))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, err := Marshal(Build(testOps, testAnswers))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("build %d differs from the first", i+2)
		}
	}
	parsed, err := Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Marshal(*parsed); !bytes.Equal(first, again) {
		t.Fatal("the document read back is written differently")
	}
}

func TestTypesOfOneNameArePackageQualified(t *testing.T) {
	type ErrorBody struct {
		Other bool `json:"other"`
	}
	d := Build([]catalog.Operation{{ID: "getX", Group: "x", Method: "GET", Path: "/x"}},
		map[string]api.Answer{"getX": {Status: 200, Rep: ErrorBody{}}})
	for _, name := range []string{"api.ErrorBody", "openapi.ErrorBody"} {
		if d.Components.Schemas[name] == nil {
			t.Errorf("no component %q among %v", name, keys(d.Components.Schemas))
		}
	}
}

func TestCheck(t *testing.T) {
	d := testDoc(t)
	good := `{"_links":{"self":{"href":"/w/a"}},"_version":1,"key":"a","tags":null,"owner":null,"creationDate":"1700000000000",
		"updated":"2026-01-02T03:04:05Z","count":"3","ratio":0.5,"on":true,"config":{"any":[1]},"value":"x","Untagged":"",
		"anonymous":{"inner":5}}`
	withField := func(name, value string) string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(good), &m); err != nil {
			t.Fatal(err)
		}
		if value == "" {
			delete(m, name)
		} else {
			m[name] = json.RawMessage(value)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name   string
		op     string
		status int
		body   string
		dated  bool
		want   string // a part of the error; "" for none
	}{
		{"an answer as declared passes", "postWidget", 201, good, false, ""},
		{"a list of answers as declared passes", "getWidgets", 200, `{"items":[` + good + `],"totalCount":1}`, false, ""},
		{"a missing required field is named", "postWidget", 201, withField("key", ""), false, `$ lacks the required member "key"`},
		{"a number where a string is declared is named", "postWidget", 201, withField("key", "7"), false, "$.key is the number 7, where the document declares string"},
		{"a fraction where an integer is declared is named", "postWidget", 201, withField("_version", "1.5"), false, "$._version is 1.5, not an integer"},
		{"an integer timestamp where the spec has a string fails", "postWidget", 201, withField("creationDate", "1700000000000"), false, "$.creationDate is the number 1700000000000"},
		{"an integer timestamp passes in the dated form", "postWidget", 201, withField("creationDate", "1700000000000"), true, ""},
		{"a timestamp string that is not digits fails", "postWidget", 201, withField("creationDate", `"soon"`), false, `not a string of Unix milliseconds`},
		{"a date-time that is not RFC 3339 fails", "postWidget", 201, withField("updated", `"yesterday"`), false, "$.updated is \"yesterday\", not a date-time"},
		{"null where the Go type cannot be null fails", "postWidget", 201, withField("on", "null"), false, "$.on is null"},
		{"a wrong type deep in a list is named with its place", "getWidgets", 200, `{"items":[` + good + `,` + withField("_links", `{"self":{"href":3}}`) + `],"totalCount":2}`, false, "$.items[1]._links.self.href is the number 3"},
		{"a missing member of a nested object is named", "getWidgets", 200, `{"items":[` + withField("anonymous", `{}`) + `],"totalCount":1}`, false, `$.items[0].anonymous lacks the required member "inner"`},
		{"a status the operation does not declare fails", "postWidget", 200, good, false, "postWidget answered 200, a status the document does not declare"},
		{"an error answer with the error body passes", "getWidgets", 404, `{"code":"not_found","message":"no","id":"r1"}`, false, ""},
		{"an error answer without the error body fails", "getWidgets", 404, `{"message":"no"}`, false, `lacks the required member "code"`},
		{"a 304 of an answer with an ETag passes", "getWidgets", 304, ``, false, ""},
		{"a 304 of an answer without one is not declared", "postWidget", 304, ``, false, "does not declare"},
		{"a 409 on a read is not declared", "getWidgets", 409, `{"code":"conflict","message":"no","id":"r1"}`, false, "does not declare"},
		{"an error of an operation without an answer is checked for its status only", "patchWidget", 404, `{"message":"no"}`, false, ""},
		{"a 304 of a read without an answer passes", "getPing", 304, ``, false, ""},
		{"a 405 of a write passes, as an approval may be required", "patchWidget", 405, ``, false, ""},
		{"an operation with its own error body is checked against it", "postToken", 400, `{"error":"invalid_client"}`, false, ""},
		{"the common error body is not that operation's", "postToken", 401, `{"code":"unauthorized","message":"no","id":"r"}`, false, `lacks the required member "error"`},
		{"any success of an operation without an answer passes", "patchWidget", 200, `[1,2]`, false, ""},
		{"a body that is not JSON fails where one is declared", "postWidget", 201, `<html>`, false, "not JSON"},
		{"an empty body fails where one is declared", "postWidget", 201, ``, false, "not JSON"},
		{"an operation the document lacks fails", "getNothing", 200, `{}`, false, "no such operation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := d.Check(tc.op, tc.status, []byte(tc.body), tc.dated)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want one with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
