// Package health answers GET /healthz: whether this process can reach its
// store, for load balancers, uptime checks and `make run` scripts.
package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// OperationID is the health check's catalog operation.
const OperationID = "getHealth"

// Timeout bounds the store read, so a hung store answers 503 rather than
// holding the checker until its own timeout.
const Timeout = 2 * time.Second

// Status is the health check's answer: "ok" whenever it is a 200.
type Status struct {
	Status string `json:"status"`
}

// Handler reads one key of table: found or not found, the store answered.
// The body says only that; it never shows data or the failure's cause
// (which the error log line keeps, under the request id).
func Handler(table store.Table) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), Timeout)
		defer cancel()
		if _, err := table.Get(ctx, store.AccountKey()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fault.Wrap(fmt.Errorf("health check: %w", err), fault.Unavailable, "the store does not answer")
		}
		w.Header().Set("Cache-Control", "no-store")
		api.WriteJSON(w, http.StatusOK, Status{Status: "ok"})
		return nil
	}
}
