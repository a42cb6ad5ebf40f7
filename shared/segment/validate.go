package segment

import (
	"encoding/json"
	"fmt"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
)

// Limits of segment fields.
const (
	MaxNameLength        = 256
	MaxDescriptionLength = 8192
	MaxTags              = 50
	MaxTagLength         = 64
	// MaxTargets is the most keys a list-based segment holds, included
	// and excluded together; more belong in a big segment.
	MaxTargets = 15000
	// MaxRules bounds a segment's rules, and MaxClauses each rule's.
	MaxRules   = 5000
	MaxClauses = 100
	// MaxItemBytes keeps a segment within DynamoDB's item limit (400 KB),
	// with room for the item's keys.
	MaxItemBytes = 380 * 1024
)

// UserKind is the context kind of user keys.
const UserKind = "user"

// Check verifies the segment's fields: a segment that fails is never stored.
func (s *Segment) Check() error {
	if err := environment.ValidKey("key", s.Key); err != nil {
		return err
	}
	if err := environment.ValidName("name", s.Name); err != nil {
		return err
	}
	if len(s.Description) > MaxDescriptionLength {
		return fault.New(fault.Invalid, "field %q must be at most %d characters", "description", MaxDescriptionLength)
	}
	if err := checkTags(s.Tags); err != nil {
		return err
	}
	if s.Unbounded {
		if err := flag.ValidContextKind("unboundedContextKind", s.UnboundedContextKind); err != nil {
			return err
		}
	}
	if err := s.checkTargets(); err != nil {
		return err
	}
	if len(s.Rules) > MaxRules {
		return fault.New(fault.Invalid, "field %q holds %d rules, at most %d are allowed", "rules", len(s.Rules), MaxRules)
	}
	ids := map[string]bool{}
	for i, r := range s.Rules {
		field := fmt.Sprintf("rules[%d]", i)
		if r.ID == "" {
			return fault.New(fault.Invalid, "field %q has no _id", field+"._id")
		}
		if ids[r.ID] {
			return fault.New(fault.Invalid, "field %q: rule _id %q appears twice", field+"._id", r.ID)
		}
		ids[r.ID] = true
		if len(r.Description) > MaxDescriptionLength {
			return fault.New(fault.Invalid, "field %q must be at most %d characters", field+".description", MaxDescriptionLength)
		}
		if len(r.Clauses) == 0 {
			return fault.New(fault.Invalid, "field %q must hold at least one clause", field+".clauses")
		}
		if len(r.Clauses) > MaxClauses {
			return fault.New(fault.Invalid, "field %q holds %d clauses, at most %d are allowed", field+".clauses", len(r.Clauses), MaxClauses)
		}
		for j, c := range r.Clauses {
			cf := fmt.Sprintf("%s.clauses[%d]", field, j)
			if err := flag.CheckClause(cf, c.Attribute, c.Op, c.ContextKind, c.Values); err != nil {
				return err
			}
			if c.Op == "segmentMatch" {
				for _, v := range c.Values {
					var key string
					if json.Unmarshal(v, &key) != nil {
						return fault.New(fault.Invalid, "field %q: segmentMatch values are segment keys (strings)", cf+".values")
					}
					if key == s.Key {
						return fault.New(fault.Invalid, "field %q: a segment cannot match itself", cf+".values")
					}
				}
			}
		}
		if r.Weight != nil && (*r.Weight < 0 || *r.Weight > flag.RolloutTotal) {
			return fault.New(fault.Invalid, "field %q must be between 0 and %d", field+".weight", flag.RolloutTotal)
		}
		if err := flag.ValidContextKind(field+".rolloutContextKind", r.RolloutContextKind); err != nil {
			return err
		}
	}
	return nil
}

func checkTags(tags []string) error {
	if len(tags) > MaxTags {
		return fault.New(fault.Invalid, "field %q holds %d tags, at most %d are allowed", "tags", len(tags), MaxTags)
	}
	for i, t := range tags {
		if t == "" || len(t) > MaxTagLength {
			return fault.New(fault.Invalid, "field \"tags[%d]\" must be 1 to %d characters", i, MaxTagLength)
		}
	}
	return nil
}

// checkTargets verifies the listed keys: each a context key, none both
// included and excluded, and at most MaxTargets in all. A big segment
// lists none here: its members are kept apart.
func (s *Segment) checkTargets() error {
	n := len(s.Included) + len(s.Excluded) + countTargets(s.IncludedContexts) + countTargets(s.ExcludedContexts)
	if s.Unbounded && n > 0 {
		return fault.New(fault.Invalid, "segment %q is a big segment: change its targets with the segment's users or contexts operations, not in the segment", s.Key)
	}
	if n > MaxTargets {
		return fault.New(fault.Invalid, "segment %q would list %d keys, at most %d are allowed: use a big segment (unbounded) for more", s.Key, n, MaxTargets)
	}
	included := map[string]bool{}
	lists := []struct {
		name    string
		targets []Target
		include bool
	}{
		{"included", []Target{{Values: s.Included, ContextKind: UserKind}}, true},
		{"includedContexts", s.IncludedContexts, true},
		{"excluded", []Target{{Values: s.Excluded, ContextKind: UserKind}}, false},
		{"excludedContexts", s.ExcludedContexts, false},
	}
	for _, l := range lists {
		seen := map[string]bool{}
		for i, t := range l.targets {
			field := l.name
			if l.name == "includedContexts" || l.name == "excludedContexts" {
				field = fmt.Sprintf("%s[%d]", l.name, i)
				if t.ContextKind == "" {
					return fault.New(fault.Invalid, "field %q is required", field+".contextKind")
				}
				if err := flag.ValidContextKind(field+".contextKind", t.ContextKind); err != nil {
					return err
				}
			}
			for j, key := range t.Values {
				if key == "" || len(key) > flag.MaxContextKeyLength {
					return fault.New(fault.Invalid, "field \"%s.values[%d]\" must be a context key of 1 to %d characters", field, j, flag.MaxContextKeyLength)
				}
				id := t.ContextKind + "\x00" + key
				if seen[id] {
					return fault.New(fault.Invalid, "field %q: %s key %q is listed twice", field, t.ContextKind, key)
				}
				seen[id] = true
				if l.include {
					included[id] = true
				} else if included[id] {
					return fault.New(fault.Invalid, "field %q: %s key %q is both included and excluded", field, t.ContextKind, key)
				}
			}
		}
	}
	return nil
}
