// Package reps holds the representations several groups answer with: an
// audit log entry (the audit log, webhook payloads, integrations' event
// hooks), a project and an environment (their groups, approval requests,
// insight groups), a flag (its group, approval requests), and the
// caller's _access on a resource. A group's own
// representations live in its package.
package reps

import (
	"encoding/json"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

type subjectRep struct {
	Links api.Links `json:"_links"`
	Name  string    `json:"name"`
}

type entryMemberRep struct {
	Links api.Links `json:"_links"`
	ID    string    `json:"_id"`
	Email string    `json:"email,omitempty"`
}

type entryTokenRep struct {
	Links        api.Links `json:"_links"`
	ID           string    `json:"_id"`
	Name         string    `json:"name"`
	Ending       string    `json:"ending"`
	ServiceToken bool      `json:"serviceToken"`
}

type parentRep struct {
	Links    api.Links `json:"_links"`
	Name     string    `json:"name"`
	Resource string    `json:"resource"`
}

// Entry is an audit log entry as the API shows it; the detailed fields only in the single read.
type Entry struct {
	Links            api.Links            `json:"_links"`
	ID               string               `json:"_id"`
	AccountID        string               `json:"_accountId"`
	Date             jsondoc.MillisString `json:"date"`
	Accesses         []audit.Access       `json:"accesses"`
	Kind             string               `json:"kind"`
	Name             string               `json:"name"`
	Description      string               `json:"description"`
	ShortDescription string               `json:"shortDescription"`
	Comment          string               `json:"comment"`
	Subject          subjectRep           `json:"subject"`
	Member           *entryMemberRep      `json:"member,omitempty"`
	Token            *entryTokenRep       `json:"token,omitempty"`
	TitleVerb        string               `json:"titleVerb"`
	Title            string               `json:"title"`
	Target           string               `json:"target"`
	Parent           *parentRep           `json:"parent,omitempty"`
	PreviousVersion  json.RawMessage      `json:"previousVersion,omitempty"`
	CurrentVersion   json.RawMessage      `json:"currentVersion,omitempty"`
	Delta            json.RawMessage      `json:"delta,omitempty"`
}

// NewEntryRep builds the summary form; detailed adds previousVersion,
// currentVersion and delta, each JSON null when absent.
func NewEntry(e audit.Entry, detailed bool) Entry {
	r := Entry{
		Links: api.Links{"self": api.JSONLink("/api/v2/auditlog/" + e.ID), "parent": api.JSONLink("/api/v2/auditlog")},
		ID:    e.ID, AccountID: e.AccountID, Date: jsondoc.MillisString(e.Date), Accesses: e.Accesses, Kind: e.Kind,
		Name: e.Name, Description: e.Description, ShortDescription: e.ShortDescription, Comment: e.Comment,
		Subject: subjectRep{Links: api.Links{}, Name: e.Subject.Name}, TitleVerb: e.TitleVerb, Title: e.Title, Target: e.Target,
	}
	if e.Href != "" {
		r.Links["resource"] = api.JSONLink(e.Href)
	}
	if e.Member != nil {
		r.Member = &entryMemberRep{Links: api.Self("/api/v2/members/" + e.Member.ID), ID: e.Member.ID, Email: e.Member.Email}
	}
	if e.Token != nil {
		r.Token = &entryTokenRep{Links: api.Self("/api/v2/tokens/" + e.Token.ID), ID: e.Token.ID, Name: e.Token.Name, Ending: e.Token.Ending, ServiceToken: e.Token.ServiceToken}
	}
	if e.Parent != nil {
		r.Parent = &parentRep{Links: api.Self(e.Parent.Href), Name: e.Parent.Name, Resource: e.Parent.Resource}
	}
	if detailed {
		r.PreviousVersion, r.CurrentVersion, r.Delta = nullIfEmpty(e.PreviousVersion), nullIfEmpty(e.CurrentVersion), nullIfEmpty(e.Delta)
	}
	return r
}

var jsonNull = json.RawMessage("null")

func nullIfEmpty(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return jsonNull
	}
	return m
}

// EntryPayload is what a webhook receives: the change's audit log entry in
// its detailed form, as GET /api/v2/auditlog/{id} shows it.
func EntryPayload(e audit.Entry) ([]byte, error) { return json.Marshal(NewEntry(e, true)) }
