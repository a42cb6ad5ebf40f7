package openapi_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/openapi"
)

// envWrite set to "write" (make openapi) rewrites openapi.json instead of
// comparing it.
const envWrite = "FLAGPLANE_OPENAPI"

// current is the document the catalog's API (not the console's page and
// files) and the answers of every group of the test server (the explicit
// list of package allgroups) make now.
func current(tb testing.TB) []byte {
	tb.Helper()
	srv := apptest.New(tb)
	answers := map[string]api.Answer{}
	for _, g := range srv.App.Groups() {
		for id, a := range g.Answers {
			answers[id] = a
		}
	}
	out, err := openapi.Marshal(openapi.Build(catalog.API(), answers))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestCommittedDocumentIsCurrent(t *testing.T) {
	got := current(t)
	if os.Getenv(envWrite) == "write" {
		gz, err := openapi.Gzip(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("openapi.json.gz", gz, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote openapi.json: %d bytes, gzipped %d", len(got), len(gz))
		return
	}
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		doc  []byte
	}{{"openapi.json.gz", openapi.JSON()}, {"openapi.json", file}} {
		if !bytes.Equal(c.doc, got) {
			t.Fatalf("shared/openapi/%s is not the document the catalog and the groups' answers make now; "+
				"run make openapi and commit it. %s", c.name, firstDifference(c.doc, got))
		}
	}
}

// firstDifference names the first line where the committed and the
// current document part.
func firstDifference(committed, now []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(now), "\n")
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("Line %d is %q, now %q.", i+1, strings.TrimSpace(a[i]), strings.TrimSpace(b[i]))
		}
	}
	return fmt.Sprintf("The committed file has %d lines, now %d.", len(a), len(b))
}
