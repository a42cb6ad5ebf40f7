package auditapi

import (
	"strconv"
	"time"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"getAuditLogEntries": func(*example.World) example.Call { return example.Call{Path: example.API + "/auditlog"} },
			"getAuditLogEntry": func(w *example.World) example.Call {
				return example.Call{Path: example.AuditEntryPath(w.AuditID)}
			},
			"postAuditLogEntries": func(w *example.World) example.Call {
				return example.Post(example.API+"/auditlog?limit=5", []any{map[string]any{"effect": "allow", "resources": []string{"proj/" + w.Project + ":env/*:flag/*"}, "actions": []string{"*"}}})
			},
			"postAuditLogEntryCounts": func(*example.World) example.Call {
				after := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
				return example.Post(example.API+"/auditlog/counts?buckets=6&after="+after, []any{map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}}})
			},
		},
		// The spec's part 2 types these as strings of Unix ms; a dated LD-API-Version answers integers.
		SpecTypes: map[string]map[string]string{"AuditLogEntryRep": {"date": "string", "target": "string"}, "AuditLogEntryListingRep": {"date": "string", "target": "string"}},
		Dated:     map[string][]string{"AuditLogEntryRep": {"date"}, "AuditLogEntryListingRep": {"date"}},
	}
}
