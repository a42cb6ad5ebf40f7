// Package openapiapi serves the committed OpenAPI document (package
// openapi) at GET /api/v2/openapi.json, with no token.
package openapiapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/openapi"
)

// OperationID is the catalog operation, the reference's name for it.
const OperationID = "getOpenapiSpec"

// Answer is the operation's success answer: the document itself, with an ETag.
var Answer = api.Answer{Status: http.StatusOK, Rep: openapi.Document{}, ETag: true}

// Handler answers the document with an ETag of its bytes, so a client
// that has it gets 304; no-cache makes caches ask again, as a new
// deployment may carry a new document.
func Handler() api.Handler {
	doc := openapi.JSON()
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "no-cache")
		// ServeContent answers If-None-Match (304) and HEAD.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc))
		return nil
	}
}
