// Package openapi describes the API as an OpenAPI 3.0.3 document, built
// from the operation catalog and the representations the groups answer
// with (their api.Answer), and checks answers against it.
//
// The document is committed as openapi.json, and embedded gzipped
// (openapi.json.gz, a tenth of the size in the function that serves it):
// the server serves its bytes, and the tests check every answer against
// them. A test fails when either file differs from what Build makes now;
// `make openapi` rewrites both.
package openapi

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// compressed is the committed document, gzipped.
//
//go:embed openapi.json.gz
var compressed []byte

var (
	jsonOnce sync.Once
	jsonDoc  []byte
)

// JSON is the committed document, decompressed on first use.
func JSON() []byte {
	jsonOnce.Do(func() {
		var err error
		if jsonDoc, err = Gunzip(compressed); err != nil {
			panic(fmt.Sprintf("openapi: the embedded document is not gzip: %v", err))
		}
	})
	return jsonDoc
}

// Gzip compresses a document as openapi.json.gz holds it.
func Gzip(doc []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(doc); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Gunzip reads a gzipped document.
func Gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

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
	parseOnce.Do(func() { embeddedDoc, parseErr = Parse(JSON()) })
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
