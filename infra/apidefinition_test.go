package infra

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/openapi"
)

// functionARN stands in for the stack's intrinsic function.
func functionARN(function string) string {
	return "arn:aws:lambda:eu-west-1:123456789012:function:" + function
}

func definition(tb testing.TB, routes []Route, cors *apiCORS) []byte {
	tb.Helper()
	doc, err := apiDefinition(apiInfo{Title: "t", Version: "2"}, routes, functionARN, cors)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func TestAPIDefinition(t *testing.T) {
	t.Run("GIVEN two routes of one function THEN they share one integration naming its ARN", func(t *testing.T) {
		var doc struct {
			Paths      map[string]map[string]json.RawMessage
			Components map[string]map[string]integration
		}
		raw := definition(t, []Route{{Key: "GET /a/{x}", Function: "f"}, {Key: "PUT /a/{x}", Function: "f"}, {Key: "GET /b", Function: "g"}}, nil)
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		integrations := doc.Components[extIntegrations]
		if len(integrations) != 2 || integrations["f"].URI != functionARN("f") || integrations["g"].URI != functionARN("g") {
			t.Fatalf("integrations %+v", integrations)
		}
		for _, m := range []string{"get", "put"} {
			if !strings.Contains(string(doc.Paths["/a/{x}"][m]), `"$ref":"`+integrationRef+`f"`) {
				t.Errorf("%s /a/{x}: %s", m, doc.Paths["/a/{x}"][m])
			}
		}
		var params []parameter
		if err := json.Unmarshal(doc.Paths["/a/{x}"]["parameters"], &params); err != nil {
			t.Fatal(err)
		}
		if want := []parameter{{Name: "x", In: "path", Required: true, Schema: map[string]string{"type": "string"}}}; !jsonEqual(params, want) {
			t.Errorf("/a/{x} parameters %+v, want %+v", params, want)
		}
	})
	t.Run("GIVEN CORS settings THEN the definition carries API Gateway's CORS extension", func(t *testing.T) {
		cors := corsFor([]string{"https://app.example.com"}, Routes())
		var doc struct {
			CORS apiCORS `json:"x-amazon-apigateway-cors"`
		}
		if err := json.Unmarshal(definition(t, Routes()[:1], cors), &doc); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(doc.CORS, *cors) || !slices.Equal(doc.CORS.AllowMethods, []string{"DELETE", "GET", "PATCH", "POST", "PUT"}) {
			t.Fatalf("CORS %+v, want %+v with the catalog's methods", doc.CORS, *cors)
		}
	})

	bad := []struct {
		name   string
		routes []Route
		want   string
	}{
		{"a route twice is refused", []Route{{Key: "GET /a", Function: "f"}, {Key: "GET /a", Function: "g"}}, "twice"},
		{"a method API Gateway cannot route is refused", []Route{{Key: "REPORT /a", Function: "f"}}, "routes no REPORT"},
		{"a route without a function is refused", []Route{{Key: "GET /a"}}, "not a method, a path and a function"},
	}
	for _, tc := range bad {
		t.Run("GIVEN "+tc.name, func(t *testing.T) {
			_, err := apiDefinition(apiInfo{}, tc.routes, functionARN, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestRoutesFromDocument(t *testing.T) {
	t.Run("GIVEN the API's OpenAPI document and the console THEN the routes are the catalog's, bar the local-only ones", func(t *testing.T) {
		got, err := apiRoutes()
		if err != nil {
			t.Fatal(err)
		}
		in := func(rs []Route) map[Route]bool {
			m := map[Route]bool{}
			for _, r := range rs {
				m[r] = true
			}
			return m
		}
		fromDoc, fromCatalog := in(got), in(Routes())
		for r := range fromCatalog {
			if !fromDoc[r] {
				t.Errorf("%s (%s) is not in the document", r.Key, r.Function)
			}
		}
		for r := range fromDoc {
			if !fromCatalog[r] {
				t.Errorf("%s (%s) is in the document only", r.Key, r.Function)
			}
		}
		if len(got) != len(fromDoc) {
			t.Errorf("%d routes, %d of them different", len(got), len(fromDoc))
		}
	})

	tests := []struct {
		name string
		doc  string
		want []Route
		err  string
	}{
		{
			name: "schemas, responses and local-only operations are not routes",
			doc: `{"openapi": "3.0.3", "paths": {
				"/api/v2/projects/{projectKey}": {
					"get": {"operationId": "getProject", "parameters": [{"name": "projectKey", "in": "path", "required": true, "schema": {"type": "string"}}],
						"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}}}},
					"delete": {"operationId": "deleteProject", "parameters": [{"name": "projectKey", "in": "path", "required": true}, {"name": "LD-API-Version", "in": "header"}],
						"responses": {"204": {"description": "gone"}}}},
				"/all": {"get": {"operationId": "streamSDKAll", "responses": {"200": {"description": "the stream"}}}},
				"/msdk/evalx/context": {"report": {"operationId": "reportSDKMobileEvaluations"}}},
				"components": {"schemas": {"Project": {"type": "object"}}}}`,
			want: []Route{{Key: "DELETE /api/v2/projects/{projectKey}", Function: "projects"}, {Key: "GET /api/v2/projects/{projectKey}", Function: "projects"}},
		},
		{
			name: "an operation the catalog lacks is refused",
			doc:  `{"paths": {"/api/v2/nowhere": {"get": {"operationId": "nowhere"}}}}`,
			err:  `"GET /api/v2/nowhere": not in the catalog`,
		},
		{
			name: "a console operation in the API's document is refused, since the console's routes come from the catalog",
			doc:  `{"paths": {"/": {"get": {"operationId": "getConsolePage"}}}}`,
			err:  `"GET /": the console's`,
		},
		{
			name: "an operation that does not declare its path's parameters is refused",
			doc:  `{"paths": {"/api/v2/projects/{projectKey}": {"get": {"operationId": "getProject"}}}}`,
			err:  "path parameters [], its path has [projectKey]",
		},
		{
			name: "an operation that declares a parameter its path lacks is refused",
			doc: `{"paths": {"/api/v2/projects": {"get": {"operationId": "getProjects",
				"parameters": [{"name": "projectKey", "in": "path", "required": true}]}}}}`,
			err: "path parameters [projectKey], its path has []",
		},
	}
	for _, tc := range tests {
		t.Run("GIVEN "+tc.name, func(t *testing.T) {
			doc, err := openapi.Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := routesFromDocument(doc)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(got, tc.want):
				t.Fatalf("routes %v, want %v", got, tc.want)
			}
		})
	}
}
