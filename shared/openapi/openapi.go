// Package openapi describes the API as an OpenAPI 3.0.3 document, built
// from the operation catalog and the representations the groups answer
// with (their api.Answer), and checks answers against it.
//
// The document is committed as openapi.json and embedded: the server
// serves those bytes, and the tests check every answer against them. A
// test fails when the file differs from what Build makes now; `make
// openapi` rewrites it.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// JSON is the committed document.
//
//go:embed openapi.json
var JSON []byte

// Parse reads a document.
func Parse(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	d.index()
	return &d, nil
}

// The committed document, parsed on first use. A function rather than a
// variable set at start, so a binary that imports the package but never
// checks (every function of a group that links the openapi package) does not link JSON.
var (
	parseOnce   sync.Once
	embeddedDoc *Document
	parseErr    error
)

func embedded() (*Document, error) {
	parseOnce.Do(func() { embeddedDoc, parseErr = Parse(JSON) })
	return embeddedDoc, parseErr
}

// Check checks an answer against the committed document; see
// Document.Check. The answer is the spec's form (string timestamps).
func Check(opID string, status int, body []byte) error {
	d, err := embedded()
	if err != nil {
		return err
	}
	return d.Check(opID, status, body, false)
}

// CheckDated checks an answer to a request that named a dated
// LD-API-Version, whose unix-millis timestamps are integers.
func CheckDated(opID string, status int, body []byte) error {
	d, err := embedded()
	if err != nil {
		return err
	}
	return d.Check(opID, status, body, true)
}

// Marshal writes d as the committed file has it: indented, with a final newline.
func Marshal(d Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // descriptions keep their < and &
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("write the OpenAPI document: %w", err)
	}
	return buf.Bytes(), nil
}
