package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/fault"
)

func (h handlers) getExpiringTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) patchExpiringTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getExpiringUserTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) patchExpiringUserTargetsForSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}
