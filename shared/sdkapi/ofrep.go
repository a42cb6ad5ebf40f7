package sdkapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/ofrep"
	"github.com/flagplane/flagplane/shared/sdkdata"
)

// Operation ids of OpenFeature's remote evaluation (OFREP).
const (
	OpOFREPFlag  = "evaluateOFREPFlag"
	OpOFREPFlags = "evaluateOFREPFlags"
)

// OFREPAPIKeyHeader is OFREP's API key header, which its providers send
// when configured with an API key; Authorization comes first.
const OFREPAPIKeyHeader = "X-API-Key"

// OFREPErrorBody describes, for the OpenAPI document, what the OFREP
// routes answer when they fail: OFREP's failure (errorCode and
// errorDetails, with the flag's key for one flag) for a bad body or
// context (400) and a flag not found (404); flagplane's error body (code,
// message, id) for the credential (401, 403), the rate limit (429), a body
// too large (413) and the server (500, 503).
type OFREPErrorBody struct {
	Key          string          `json:"key,omitempty"`
	ErrorCode    ofrep.ErrorCode `json:"errorCode,omitempty"`
	ErrorDetails string          `json:"errorDetails,omitempty"`
	Code         fault.Code      `json:"code,omitempty"`
	Message      string          `json:"message,omitempty"`
	ID           string          `json:"id,omitempty"`
}

// ofrepCredential reads an OFREP request's credential and tells its kind
// by its form: Authorization (as is, or after "Bearer "), else X-API-Key,
// carries the environment's SDK key (sdk-…: every flag, as server-side
// SDKs see them), mobile key (mob-…: the flags available to mobile SDKs)
// or client-side id (anything else: the flags available to client-side
// SDKs, for OFREP's web provider).
func ofrepCredential(r *http.Request) (environment.CredentialKind, string) {
	cred := api.SDKCredential(r)
	if cred == "" {
		cred = strings.TrimSpace(r.Header.Get(OFREPAPIKeyHeader))
	}
	switch {
	case strings.HasPrefix(cred, string(environment.ServerCredential)+"-"):
		return environment.ServerCredential, cred
	case strings.HasPrefix(cred, string(environment.MobileCredential)+"-"):
		return environment.MobileCredential, cred
	}
	return environment.ClientSideCredential, cred
}

// ofrepRequest is an authenticated OFREP request: its credential's kind,
// its environment and its context.
type ofrepRequest struct {
	kind environment.CredentialKind
	env  *environment.Environment
	c    ldcontext.Context
}

// readOFREP authenticates an OFREP request, counts it against its
// credential's rate limit and reads its context. Errors of the
// credential (401, 403 for secure mode), of the limit (429) and of the
// server are returned; a request whose body or context is wrong gets
// failure, OFREP's error code for it, and its details.
func (h handlers) readOFREP(w http.ResponseWriter, r *http.Request) (q ofrepRequest, failure *ofrep.BulkFailure, err error) {
	kind, cred := ofrepCredential(r)
	if cred == "" {
		return q, nil, fault.New(fault.Unauthorized, "the Authorization header must carry the environment's SDK key, mobile key or client-side id")
	}
	if q.env, err = h.authenticate(w, r, kind, cred); err != nil {
		return q, nil, err
	}
	q.kind = kind
	body, err := api.ReadBody(w, r)
	if fault.Is(err, fault.Invalid) {
		return q, &ofrep.BulkFailure{ErrorCode: ofrep.ParseError, ErrorDetails: fault.MessageOf(err) + `: send {"context":{"targetingKey":"..."}}`}, nil
	}
	if err != nil {
		return q, nil, err
	}
	var req ofrep.Request
	if err := jsondoc.Unmarshal(body, &req); err != nil {
		return q, &ofrep.BulkFailure{ErrorCode: ofrep.ParseError, ErrorDetails: fault.MessageOf(err)}, nil
	}
	if q.c, err = ofrep.ParseContext(req.Context); err != nil {
		return q, &ofrep.BulkFailure{ErrorCode: ofrep.CodeOf(err), ErrorDetails: fault.MessageOf(err)}, nil
	}
	if err := checkSecureMode(q.env, kind, q.c, r); err != nil {
		return q, nil, err
	}
	return q, nil, nil
}

// ofrepFlag is POST /ofrep/v1/evaluate/flags/{key}: one flag's
// evaluation (200), FLAG_NOT_FOUND (404) for a flag that does not exist
// or that the credential may not see, and 400 with the error code for a
// bad request or context or a failed evaluation.
func (h handlers) ofrepFlag(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	q, failure, err := h.readOFREP(w, r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-store")
	if failure != nil {
		api.WriteJSON(w, http.StatusBadRequest, ofrep.Failure{Key: key, ErrorCode: failure.ErrorCode, ErrorDetails: failure.ErrorDetails})
		return nil
	}
	snap, err := h.s.Flags(r.Context(), sdkdata.RefOf(q.env))
	if err != nil {
		return err
	}
	f, d, ok := snap.Evaluator(r.Context(), q.kind, q.c).Flag(key)
	if !ok {
		api.WriteJSON(w, http.StatusNotFound, ofrep.NotFound(key))
		return nil
	}
	e, fail := ofrep.Answer(ofrepFlagOf(f), d)
	if fail != nil {
		api.WriteJSON(w, http.StatusBadRequest, fail)
		return nil
	}
	api.WriteJSON(w, http.StatusOK, e)
	return nil
}

// ofrepFlags is POST /ofrep/v1/evaluate/flags: every flag the credential
// may see, by key, each evaluated or failed. The answer's ETag is that of
// its body, so a provider polling with If-None-Match gets 304 until a
// value, reason or flag changes for its context.
func (h handlers) ofrepFlags(w http.ResponseWriter, r *http.Request) error {
	q, failure, err := h.readOFREP(w, r)
	if err != nil {
		return err
	}
	if failure != nil {
		w.Header().Set("Cache-Control", "private, no-store")
		api.WriteJSON(w, http.StatusBadRequest, failure)
		return nil
	}
	snap, err := h.s.Flags(r.Context(), sdkdata.RefOf(q.env))
	if err != nil {
		return err
	}
	out := ofrep.Bulk{Flags: []any{}}
	snap.Evaluator(r.Context(), q.kind, q.c).Each(func(f *sdkdata.Flag, d ldreason.EvaluationDetail) {
		if e, fail := ofrep.Answer(ofrepFlagOf(f), d); fail != nil {
			out.Flags = append(out.Flags, fail)
		} else {
			out.Flags = append(out.Flags, e)
		}
	})
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	writeData(w, r, `"`+hex.EncodeToString(sum[:16])+`"`, func() []byte { return body })
	return nil
}

// ofrepFlagOf is what OFREP's answer needs of a flag.
func ofrepFlagOf(f *sdkdata.Flag) ofrep.Flag {
	return ofrep.Flag{Key: f.Key, Version: f.Version, Model: f.Model, VariationNames: f.VariationNames()}
}
