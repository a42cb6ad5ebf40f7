package apptest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// AuditEntry is an audit log entry as the API shows it, for the tests of
// every group whose changes write one.
type AuditEntry struct {
	Links     map[string]struct{ Href string } `json:"_links"`
	ID        string                           `json:"_id"`
	AccountID string                           `json:"_accountId"`
	Date      string                           `json:"date"`
	Accesses  []struct {
		Action   string `json:"action"`
		Resource string `json:"resource"`
	} `json:"accesses"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Comment     string `json:"comment"`
	Subject     struct {
		Name string `json:"name"`
	} `json:"subject"`
	Member *struct {
		ID    string `json:"_id"`
		Email string `json:"email"`
	} `json:"member"`
	Token *struct {
		ID           string `json:"_id"`
		Name         string `json:"name"`
		Ending       string `json:"ending"`
		ServiceToken bool   `json:"serviceToken"`
	} `json:"token"`
	TitleVerb string `json:"titleVerb"`
	Title     string `json:"title"`
	Target    string `json:"target"`
	Parent    *struct {
		Name     string `json:"name"`
		Resource string `json:"resource"`
	} `json:"parent"`
	PreviousVersion json.RawMessage `json:"previousVersion"`
	CurrentVersion  json.RawMessage `json:"currentVersion"`
	Delta           json.RawMessage `json:"delta"`
}

// Access is "action resource" of the entry's first access.
func (e AuditEntry) Access() string {
	if len(e.Accesses) == 0 {
		return ""
	}
	return e.Accesses[0].Action + " " + e.Accesses[0].Resource
}

// Actions are the actions of the entry's accesses, in order.
func (e AuditEntry) Actions() []string {
	var out []string
	for _, a := range e.Accesses {
		out = append(out, a.Action)
	}
	return out
}

// Millis is the entry's date, which the API gives as Unix ms in a string.
func (e AuditEntry) Millis(tb testing.TB) int64 {
	tb.Helper()
	d, err := strconv.ParseInt(e.Date, 10, 64)
	if err != nil {
		tb.Fatalf("entry %s date %q is not Unix ms in a string", e.ID, e.Date)
	}
	return d
}

// AuditEntries is a page of the audit log.
type AuditEntries struct {
	Links map[string]struct{ Href string } `json:"_links"`
	Items []AuditEntry                     `json:"items"`
}

// AuditPage reads one page of the audit log.
func AuditPage(tb testing.TB, srv *Server, href string) AuditEntries {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, href, nil)
	WantStatus(tb, res, http.StatusOK)
	var page AuditEntries
	res.JSON(tb, &page)
	return page
}

// LatestAuditEntry reads the newest audit log entry in full.
func LatestAuditEntry(tb testing.TB, srv *Server) AuditEntry {
	tb.Helper()
	page := AuditPage(tb, srv, API+"/auditlog?limit=1")
	if len(page.Items) == 0 {
		tb.Fatalf("the audit log is empty")
	}
	res := srv.Do(tb, http.MethodGet, AuditEntryPath(page.Items[0].ID), nil)
	WantStatus(tb, res, http.StatusOK)
	var e AuditEntry
	res.JSON(tb, &e)
	return e
}
