package flagimport

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/segment"
)

// unleashSource reads a project's features from Unleash's admin API: the
// project's feature list (with tags), then each feature with its
// environments' strategies, and when a strategy matches segments, every
// segment (Unleash's segments are global, one list for all projects).
type unleashSource struct {
	client  *http.Client
	base    string
	token   string
	project string
}

type unleashFeature struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Archived    bool   `json:"archived"`
	Tags        []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"tags"`
	Environments []unleashEnv      `json:"environments"`
	Variants     []json.RawMessage `json:"variants"`
}

type unleashEnv struct {
	Name       string            `json:"name"`
	Enabled    bool              `json:"enabled"`
	Strategies []unleashStrategy `json:"strategies"`
	Variants   []json.RawMessage `json:"variants"`
}

type unleashStrategy struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Title       *string             `json:"title"`
	Disabled    bool                `json:"disabled"`
	SortOrder   int                 `json:"sortOrder"`
	Constraints []unleashConstraint `json:"constraints"`
	Parameters  map[string]any      `json:"parameters"`
	Segments    []json.RawMessage   `json:"segments"`
	Variants    []json.RawMessage   `json:"variants"`
}

type unleashConstraint struct {
	ContextName     string   `json:"contextName"`
	Operator        string   `json:"operator"`
	Values          []string `json:"values"`
	Value           string   `json:"value"`
	Inverted        bool     `json:"inverted"`
	CaseInsensitive bool     `json:"caseInsensitive"`
}

func (s *unleashSource) Flags(ctx context.Context) ([]SourceFlag, []SourceSegment, error) {
	headers := map[string]string{"Authorization": s.token}
	base := "/api/admin/projects/" + url.PathEscape(s.project) + "/features"
	var list struct {
		Features []unleashFeature `json:"features"`
	}
	if err := getJSON(ctx, s.client, s.base, base, headers, &list); err != nil {
		return nil, nil, err
	}
	if len(list.Features) > MaxFlagsPerRun {
		return nil, nil, &SourceError{Status: 413, Message: fmt.Sprintf("Unleash project %q holds %d features, more than the %d one configuration imports", s.project, len(list.Features), MaxFlagsPerRun)}
	}
	// One read per feature (the list has no strategies), unleashReaders at
	// a time, so a project of hundreds of features fits in a run.
	features := make([]unleashFeature, len(list.Features))
	errs := make([]error, len(list.Features))
	next := make(chan int)
	var wg sync.WaitGroup
	for range unleashReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				summary := list.Features[i]
				f := &features[i]
				if errs[i] = getJSON(ctx, s.client, s.base, base+"/"+url.PathEscape(summary.Name), headers, f); errs[i] == nil {
					f.Tags = summary.Tags // the list carries them; the single read may not
				}
			}
		}()
	}
	for i, summary := range list.Features {
		if !summary.Archived {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	var kept []unleashFeature
	for i, summary := range list.Features {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		if !summary.Archived {
			kept = append(kept, features[i])
		}
	}
	segs, err := s.segments(ctx, kept)
	if err != nil {
		return nil, nil, err
	}
	out := make([]SourceFlag, len(kept))
	for i, f := range kept {
		out[i] = fromUnleash(f, segs)
	}
	return out, unleashSourceSegments(out, segs), nil
}

// unleashSegment is one of Unleash's segments: contexts that pass all its
// constraints.
type unleashSegment struct {
	ID          int                 `json:"id"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Constraints []unleashConstraint `json:"constraints"`
}

// unleashSegments are Unleash's segments by id, each with the key it has
// in flagplane and its constraints as one rule (or why they cannot be).
type unleashSegments map[int]*convertedSegment

type convertedSegment struct {
	unleashSegment
	key     string
	rule    segment.Rule
	problem string
}

// segments reads Unleash's segments when a strategy of features matches
// any (else none: an Unleash without segments needs no read).
func (s *unleashSource) segments(ctx context.Context, features []unleashFeature) (unleashSegments, error) {
	used := false
	for _, f := range features {
		for _, e := range f.Environments {
			for _, st := range e.Strategies {
				used = used || len(st.Segments) > 0
			}
		}
	}
	if !used {
		return nil, nil
	}
	var list struct {
		Segments []unleashSegment `json:"segments"`
	}
	if err := getJSON(ctx, s.client, s.base, "/api/admin/segments", map[string]string{"Authorization": s.token}, &list); err != nil {
		return nil, err
	}
	out := unleashSegments{}
	for _, sg := range list.Segments {
		out[sg.ID] = convertUnleashSegment(sg)
	}
	return out, nil
}

// unleashSegmentKey is the key an Unleash segment has in flagplane: from
// its id, which stays when the segment is renamed, so a rerun finds the
// segment it made before.
func unleashSegmentKey(id int) string { return fmt.Sprintf("unleash-segment-%d", id) }

// convertUnleashSegment turns an Unleash segment's constraints into one
// rule of clauses (all must pass, as all constraints must), converted as
// strategy constraints are, with ids stable across runs.
func convertUnleashSegment(sg unleashSegment) *convertedSegment {
	key := unleashSegmentKey(sg.ID)
	c := &convertedSegment{unleashSegment: sg, key: key, rule: segment.Rule{ID: key + "-constraints", Clauses: []flag.Clause{}}}
	for i, k := range sg.Constraints {
		cl, problem := unleashClause(k)
		if problem != "" {
			c.problem = fmt.Sprintf("segment %q (%d): constraint %d: %s", sg.Name, sg.ID, i, problem)
			return c
		}
		cl.ID = fmt.Sprintf("%s-c%d", key, i)
		c.rule.Clauses = append(c.rule.Clauses, cl)
	}
	return c
}

// unleashSourceSegments are the segments the flags' rules match, one per
// source environment that matches it, as flagplane segments of one rule.
func unleashSourceSegments(flags []SourceFlag, segs unleashSegments) []SourceSegment {
	byKey := map[string]*convertedSegment{}
	for _, c := range segs {
		byKey[c.key] = c
	}
	var out []SourceSegment
	seen := map[string]bool{}
	for _, sf := range flags {
		for _, env := range slices.Sorted(maps.Keys(sf.Envs)) {
			for _, key := range segmentsUsed(sf, env) {
				c := byKey[key]
				if c == nil || seen[segmentID(env, key)] {
					continue
				}
				seen[segmentID(env, key)] = true
				out = append(out, SourceSegment{Env: env, Key: key, Name: c.Name, Description: c.Description,
					Rules: []segment.Rule{c.rule}})
			}
		}
	}
	return out
}

// unleashReaders is how many features are read from Unleash at once.
const unleashReaders = 8

// Variations of a flag imported from Unleash: a feature is on or off.
const (
	unleashOn  = 0
	unleashOff = 1
)

// fromUnleash maps an Unleash feature to a boolean flag. In each
// environment the flag is on when the feature is enabled, and serves true
// to contexts a strategy enables it for: every active strategy becomes a
// rule (its constraints the clauses; a gradual rollout a percentage
// rollout), those serving true first, and a strategy matching everyone
// becomes the default rule. Contexts no strategy enables it for get false,
// and an enabled feature without strategies serves true to everyone.
// A strategy's segments become segmentMatch clauses, one per segment (a
// context must be in all, as Unleash requires), naming segments imported
// with the flag. What flagplane cannot express (variants, custom
// strategies, case-insensitive string operators, the current time) is a
// Problem.
func fromUnleash(f unleashFeature, segs unleashSegments) SourceFlag {
	temporary := f.Type == "release" || f.Type == "experiment" || f.Type == ""
	sf := SourceFlag{Key: f.Name, Name: f.Name, Description: f.Description, Temporary: &temporary,
		Variations: []flag.VariationInput{{Value: json.RawMessage("true"), Name: "Enabled"}, {Value: json.RawMessage("false"), Name: "Disabled"}},
		Defaults:   &flag.Defaults{OnVariation: unleashOn, OffVariation: unleashOff}, Envs: map[string]*flag.EnvConfig{}}
	for _, t := range f.Tags {
		name := t.Value
		if t.Type != "" && t.Type != "simple" {
			name = t.Type + ":" + t.Value
		}
		// A tag flagplane cannot hold (a space, say) is left out rather than failing the flag.
		if environment.ValidTags("tags", []string{name}) == nil && !slices.Contains(sf.Tags, name) {
			sf.Tags = append(sf.Tags, name)
		}
	}
	if len(f.Variants) > 0 {
		sf.Problem = "the feature has variants; only on/off features are imported"
		return sf
	}
	for _, e := range f.Environments {
		c, problem := unleashTargeting(e, segs)
		if problem != "" {
			sf.Problem = fmt.Sprintf("environment %q: %s", e.Name, problem)
			return sf
		}
		sf.Envs[e.Name] = c
	}
	return sf
}

func unleashTargeting(e unleashEnv, segs unleashSegments) (*flag.EnvConfig, string) {
	on, off := unleashOn, unleashOff
	c := &flag.EnvConfig{On: e.Enabled, OffVariation: &off, Rules: []flag.Rule{}, Targets: []flag.Target{}, ContextTargets: []flag.Target{}}
	if len(e.Variants) > 0 {
		return nil, "the environment has variants; only on/off features are imported"
	}
	strategies := slices.Clone(e.Strategies)
	slices.SortStableFunc(strategies, func(a, b unleashStrategy) int { return a.SortOrder - b.SortOrder })
	// Unleash enables a feature when any strategy does; flagplane serves the
	// first matching rule. So rules serving true come first, percentage
	// rollouts after them, and the default rule is what enables everyone.
	var fixed, rollouts []flag.Rule
	var everyone *flag.VariationOrRoll
	active, problem := 0, ""
	for _, st := range strategies {
		if st.Disabled {
			continue
		}
		active++
		serve, clauses, p := unleashStrategyRule(st, segs)
		switch {
		case p != "":
			if problem == "" {
				problem = fmt.Sprintf("strategy %q (%s): %s", st.ID, st.Name, p)
			}
			continue
		case serve == nil:
			continue // enables the feature for nobody
		case len(clauses) == 0:
			// Matches everyone: true for all beats any rollout; of rollouts
			// (hashed alike by their group), the largest share.
			if everyone == nil || serve.Rollout == nil || everyone.Rollout != nil && share(serve) > share(everyone) {
				everyone = serve
			}
			continue
		}
		desc := st.Name
		if st.Title != nil && *st.Title != "" {
			desc = *st.Title
		}
		r := flag.Rule{ID: st.ID, Description: desc, Clauses: clauses, VariationOrRoll: *serve}
		if serve.Rollout != nil {
			rollouts = append(rollouts, r)
		} else {
			fixed = append(fixed, r)
		}
	}
	if everyone != nil && everyone.Rollout == nil {
		// Everyone gets true: the other strategies change nothing.
		c.Fallthrough = *everyone
		return c, ""
	}
	if problem != "" {
		return nil, problem
	}
	c.Rules = append(append(c.Rules, fixed...), rollouts...)
	switch {
	case everyone != nil:
		c.Fallthrough = *everyone
	case active == 0:
		c.Fallthrough = flag.VariationOrRoll{Variation: &on}
	default:
		c.Fallthrough = flag.VariationOrRoll{Variation: &off}
	}
	return c, ""
}

// share is the weight a rollout gives true.
func share(v *flag.VariationOrRoll) int {
	for _, w := range v.Rollout.Variations {
		if w.Variation == unleashOn {
			return w.Weight
		}
	}
	return 0
}

// unleashStrategyRule returns what a strategy serves (nil: nothing) and
// to whom (no clauses: everyone).
func unleashStrategyRule(st unleashStrategy, segs unleashSegments) (*flag.VariationOrRoll, []flag.Clause, string) {
	if len(st.Variants) > 0 {
		return nil, nil, "strategy variants are not imported; only on/off features are"
	}
	if st.ID == "" {
		return nil, nil, "the strategy has no id"
	}
	var clauses []flag.Clause
	for i, k := range st.Constraints {
		cl, problem := unleashClause(k)
		if problem != "" {
			return nil, nil, fmt.Sprintf("constraint %d: %s", i, problem)
		}
		cl.ID = fmt.Sprintf("%s-c%d", st.ID, i) // stable, so a rerun changes nothing
		clauses = append(clauses, cl)
	}
	for _, raw := range st.Segments {
		id, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			return nil, nil, fmt.Sprintf("segment %s is not a segment id", raw)
		}
		sg := segs[id]
		switch {
		case sg == nil:
			return nil, nil, fmt.Sprintf("segment %d is not among Unleash's segments", id)
		case sg.problem != "":
			return nil, nil, sg.problem
		case len(sg.rule.Clauses) == 0:
			continue // a segment without constraints holds everyone
		}
		b, _ := json.Marshal(sg.key)
		clauses = append(clauses, flag.Clause{ID: fmt.Sprintf("%s-s%d", st.ID, id), Op: "segmentMatch", Values: []json.RawMessage{b}})
	}
	on := unleashOn
	list := func(attr, param string) {
		var vals []json.RawMessage
		for _, v := range strings.Split(param, ",") {
			if v = strings.TrimSpace(v); v != "" {
				b, _ := json.Marshal(v)
				vals = append(vals, b)
			}
		}
		clauses = append(clauses, flag.Clause{ID: fmt.Sprintf("%s-%s", st.ID, attr), Attribute: attr, Op: "in", Values: vals})
	}
	switch st.Name {
	case "default":
		return &flag.VariationOrRoll{Variation: &on}, clauses, ""
	case "userWithId":
		list("key", param(st.Parameters, "userIds"))
		return &flag.VariationOrRoll{Variation: &on}, clauses, ""
	case "remoteAddress":
		ips := param(st.Parameters, "IPs")
		if strings.Contains(ips, "/") {
			return nil, nil, "IP ranges (CIDR) are not imported; only single addresses are"
		}
		list("remoteAddress", ips)
		return &flag.VariationOrRoll{Variation: &on}, clauses, ""
	case "applicationHostname":
		list("hostname", param(st.Parameters, "hostNames"))
		return &flag.VariationOrRoll{Variation: &on}, clauses, ""
	case "flexibleRollout":
		pct, err := strconv.Atoi(strings.TrimSpace(param(st.Parameters, "rollout")))
		if err != nil || pct < 0 || pct > 100 {
			return nil, nil, fmt.Sprintf("rollout %q is not a percentage from 0 to 100", param(st.Parameters, "rollout"))
		}
		switch pct {
		case 0:
			return nil, clauses, ""
		case 100:
			return &flag.VariationOrRoll{Variation: &on}, clauses, ""
		}
		bucketBy := ""
		switch s := param(st.Parameters, "stickiness"); s {
		case "", "default", "userId", "random":
		default:
			bucketBy = s // sessionId or a custom context field
		}
		share := pct * flag.RolloutTotal / 100
		return &flag.VariationOrRoll{Rollout: &flag.Rollout{BucketBy: bucketBy, Variations: []flag.WeightedVariation{
			{Variation: unleashOn, Weight: share}, {Variation: unleashOff, Weight: flag.RolloutTotal - share}}}}, clauses, ""
	}
	return nil, nil, "custom strategies are not imported"
}

// param reads a strategy parameter, which Unleash keeps as a string (older
// servers may send a number).
func param(p map[string]any, name string) string {
	switch v := p[name].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// unleashOps maps Unleash's constraint operators to clause operators.
var unleashOps = map[string]string{
	"IN": "in", "NOT_IN": "in",
	"STR_CONTAINS": "contains", "STR_STARTS_WITH": "startsWith", "STR_ENDS_WITH": "endsWith",
	"NUM_EQ": "in", "NUM_GT": "greaterThan", "NUM_GTE": "greaterThanOrEqual", "NUM_LT": "lessThan", "NUM_LTE": "lessThanOrEqual",
	"DATE_AFTER": "after", "DATE_BEFORE": "before",
	"SEMVER_EQ": "semVerEqual", "SEMVER_GT": "semVerGreaterThan", "SEMVER_LT": "semVerLessThan",
}

func unleashClause(k unleashConstraint) (flag.Clause, string) {
	op, ok := unleashOps[k.Operator]
	if !ok {
		return flag.Clause{}, fmt.Sprintf("operator %q is not imported", k.Operator)
	}
	if k.ContextName == "currentTime" {
		return flag.Clause{}, "constraints on the current time are not imported"
	}
	if k.CaseInsensitive && strings.HasPrefix(k.Operator, "STR_") {
		return flag.Clause{}, "case-insensitive string constraints are not imported"
	}
	attr := k.ContextName
	if attr == "userId" {
		attr = "key" // Unleash's user id is the context key
	}
	values := k.Values
	if len(values) == 0 && k.Value != "" {
		values = []string{k.Value}
	}
	cl := flag.Clause{Attribute: attr, Op: op, Negate: k.Inverted != (k.Operator == "NOT_IN")}
	for _, v := range values {
		if strings.HasPrefix(k.Operator, "NUM_") {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return flag.Clause{}, fmt.Sprintf("value %q of a numeric constraint is not a number", v)
			}
			b, _ := json.Marshal(n)
			cl.Values = append(cl.Values, b)
			continue
		}
		b, _ := json.Marshal(v)
		cl.Values = append(cl.Values, b)
	}
	return cl, ""
}
