package segmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/fault"
)

func (h handlers) updateBigSegmentContextTargets(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getSegmentMembershipForContext(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) createBigSegmentExport(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getBigSegmentExport(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) createBigSegmentImport(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getBigSegmentImport(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) updateBigSegmentTargets(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getSegmentMembershipForUser(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}

func (h handlers) getContextInstanceSegmentsMembershipByEnv(w http.ResponseWriter, r *http.Request) error {
	return fault.New(fault.NotImplemented, "not built yet")
}
