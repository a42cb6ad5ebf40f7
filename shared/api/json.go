package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// MaxBody is the largest request body accepted (1 MiB).
const MaxBody = 1 << 20

// ReadBody reads the whole request body, refusing more than MaxBody bytes
// with 413 and an empty body with 400.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, fault.New(fault.TooLarge, "request body is larger than %d bytes", MaxBody)
		}
		return nil, fault.Wrap(err, fault.Invalid, "request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fault.New(fault.Invalid, "request body is required")
	}
	return body, nil
}

// Decode reads a JSON request body into v (limits as ReadBody, decoding as jsondoc).
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := ReadBody(w, r)
	if err != nil {
		return err
	}
	return jsondoc.Unmarshal(body, v)
}

// RequireJSON refuses a body announced as anything but JSON
// (application/json or a +json type) with 415 unsupported_media_type. A
// request without Content-Type is read as JSON.
func RequireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return fault.New(fault.UnsupportedMedia, "the body must be JSON (Content-Type: application/json), not %.100q", ct)
}

// SemanticPatchModel is the domain-model parameter of a semantic patch's Content-Type.
const SemanticPatchModel = "flagplane.semanticpatch"

// LaunchDarklySemanticPatchModel is the reference's name for the same
// model, which LaunchDarkly's own clients send; it is accepted alike.
const LaunchDarklySemanticPatchModel = "launchdarkly.semanticpatch"

// IsSemanticPatch reports whether the request's Content-Type announces a
// semantic patch, under flagplane's model name or LaunchDarkly's.
func IsSemanticPatch(r *http.Request) bool {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return false
	}
	m := params["domain-model"]
	return m == SemanticPatchModel || m == LaunchDarklySemanticPatchModel
}

// WriteJSON writes v with status. The answer to a request that names a
// dated LaunchDarkly API version has its jsondoc.MillisString timestamps
// as integers, as LaunchDarkly's clients decode them; every other answer
// keeps the spec's strings.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err == nil && answersDated(w) {
		body, err = jsondoc.StringMillisAsIntegers(v, body)
	}
	if err != nil {
		body = []byte(fmt.Sprintf(`{"code":%q,"message":"an internal error occurred","id":""}`, fault.Internal))
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
