package policy

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// resourcesFrom derives a few concrete resources from arbitrary input, so
// Matches meets shapes, keys and tags the parser never produced.
func resourcesFrom(tb testing.TB, s string) []Resource {
	tb.Helper()
	var built Resource
	for i, part := range strings.Split(s, ":") {
		body, tagList, _ := strings.Cut(part, ";")
		kind, key, _ := strings.Cut(body, "/")
		var tags []string
		if tagList != "" {
			tags = strings.Split(tagList, ",")
		}
		if i == 0 {
			built = NewResource(kind, key, tags...)
		} else {
			built = built.Child(kind, key, tags...)
		}
	}
	return []Resource{{}, built, NewResource("proj", s), NewResource("proj", "shop").Child("env", s, s)}
}

// instance turns a valid specifier into a resource it must match: every "*"
// replaced by fill, every pattern tag carried.
func instance(sp Specifier, fill string) Resource {
	var r Resource
	for i, seg := range sp.Segments {
		key := strings.ReplaceAll(seg.Name, "*", fill)
		if i == 0 {
			r = NewResource(seg.Kind, key, seg.Tags...)
		} else {
			r = r.Child(seg.Kind, key, seg.Tags...)
		}
	}
	return r
}

// globRegexp is an independent implementation of name globs to check
// globMatch against.
func globRegexp(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^(?s:` + strings.Join(parts, ".*") + `)$`)
}

func FuzzParseSpecifier(f *testing.F) {
	for _, s := range []string{"proj/*", "proj/shop;mobile,web:env/production;critical:flag/new-checkout", "proj/*:env/*;qa_*:/flag/*", "a*b*c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpecifier(s)
		for _, r := range resourcesFrom(t, s) {
			_ = sp.Matches(r) // must not panic, valid or not
		}
		if err != nil {
			return
		}
		canonical := sp.String()
		again, err := ParseSpecifier(canonical)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canonical, s, err)
		}
		if !again.Equal(sp) {
			t.Fatalf("%q re-parses to %#v, want %#v", canonical, again.Segments, sp.Segments)
		}
		if again.String() != canonical {
			t.Fatalf("canonical form is not stable: %q then %q", canonical, again.String())
		}
		for _, fill := range []string{"", "x", "*", "a-b.c"} {
			if r := instance(sp, fill); !sp.Matches(r) {
				t.Fatalf("%q does not match its own instance %s", canonical, r)
			}
		}
		untagged := instance(sp, "x")
		for i := range untagged.segs {
			untagged.segs[i].Tags = nil
		}
		hasTags := false
		for _, seg := range sp.Segments {
			hasTags = hasTags || len(seg.Tags) > 0
		}
		if hasTags && sp.Matches(untagged) {
			t.Fatalf("%q with tags matches untagged %s", canonical, untagged)
		}
		deeper := instance(sp, "x").Child("flag", "x")
		if sp.Matches(deeper) {
			t.Fatalf("%q matches the deeper %s", canonical, deeper)
		}
		for _, seg := range sp.Segments {
			re := globRegexp(seg.Name)
			for _, key := range []string{s, seg.Name, strings.ReplaceAll(seg.Name, "*", ""), "x" + seg.Name + "x"} {
				if got, want := globMatch(seg.Name, key), re.MatchString(key); got != want {
					t.Fatalf("globMatch(%q, %q) = %v, regexp says %v", seg.Name, key, got, want)
				}
			}
		}
	})
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`[{"resources":["proj/*:env/*:flag/*"],"actions":["*"],"effect":"allow"}]`,
		`[{"notResources":["proj/a"],"notActions":["update*"],"effect":"deny"}]`,
		`[{"resources":["proj/a:env"],"actions":["*"],"effect":"allow"}]`,
		`[{"resources":["proj/*"],"notResources":["proj/a"],"actions":["*"],"effect":"allow"}]`,
		`[{"effect":"allow"}]`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var stmts []Statement
		if json.Unmarshal(data, &stmts) != nil {
			return
		}
		err := Validate(stmts)
		grants := []Grant{{RoleName: "fuzz", Statements: stmts}}
		p, cerr := Compile(grants)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Validate says %v but Compile says %v", err, cerr)
		}
		if err != nil {
			return
		}
		for _, r := range append(sampleResources(t), shopFlag, Resource{}) {
			d := p.Evaluate(r, "updateOn")
			if d.Allowed && (d.Reason == nil || d.Reason.Effect != Allow) {
				t.Fatalf("allowed without an allow reason: %+v", d)
			}
			if d.Reason != nil && d.Reason.RoleName != "fuzz" {
				t.Fatalf("reason names role %q", d.Reason.RoleName)
			}
		}
		if _, err := json.Marshal(p.Access(shopFlag, []string{"updateOn", "deleteFlag"})); err != nil {
			t.Fatalf("marshal access: %v", err)
		}
		if err := Covers(grants, grants); err != nil {
			t.Fatalf("a holder does not cover its own grants: %v", err)
		}
	})
}
