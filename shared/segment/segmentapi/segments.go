package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/fault"
)

func (h handlers) getSegments(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) postSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) patchSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) deleteSegment(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}
