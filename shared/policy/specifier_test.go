package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

// mustParse parses a specifier the test knows to be valid.
func mustParse(tb testing.TB, s string) Specifier {
	tb.Helper()
	sp, err := ParseSpecifier(s)
	if err != nil {
		tb.Fatalf("ParseSpecifier(%q): %v", s, err)
	}
	return sp
}

func TestParseSpecifierAcceptsWellFormedInput(t *testing.T) {
	tests := []struct {
		name, in, canonical string
		segments            []Segment
	}{
		{"a single project is one segment", "proj/shop", "proj/shop",
			[]Segment{{Kind: "proj", Name: "shop"}}},
		{"a flag is named inside its project and environment", "proj/shop:env/production:flag/new-checkout",
			"proj/shop:env/production:flag/new-checkout",
			[]Segment{{Kind: "proj", Name: "shop"}, {Kind: "env", Name: "production"}, {Kind: "flag", Name: "new-checkout"}}},
		{"tags are kept per segment", "proj/shop;mobile,web:env/production;critical:flag/new-checkout",
			"proj/shop;mobile,web:env/production;critical:flag/new-checkout",
			[]Segment{{Kind: "proj", Name: "shop", Tags: []string{"mobile", "web"}}, {Kind: "env", Name: "production", Tags: []string{"critical"}}, {Kind: "flag", Name: "new-checkout"}}},
		{"tags are sorted and deduplicated in the canonical form", "proj/*;web,mobile,web", "proj/*;mobile,web",
			[]Segment{{Kind: "proj", Name: "*", Tags: []string{"mobile", "web"}}}},
		{"globs may start, end or fill a name", "proj/prod-*:env/*-eu:flag/*", "proj/prod-*:env/*-eu:flag/*",
			[]Segment{{Kind: "proj", Name: "prod-*"}, {Kind: "env", Name: "*-eu"}, {Kind: "flag", Name: "*"}}},
		{"runs of stars collapse to one", "proj/a**b***", "proj/a*b*",
			[]Segment{{Kind: "proj", Name: "a*b*"}}},
		{"a kind nobody uses yet is accepted", "widget-v2/x", "widget-v2/x",
			[]Segment{{Kind: "widget-v2", Name: "x"}}},
		{"member emails and ids fit in names", "member/jo+ops@example.com:token/61095542756dba551110ae21",
			"member/jo+ops@example.com:token/61095542756dba551110ae21",
			[]Segment{{Kind: "member", Name: "jo+ops@example.com"}, {Kind: "token", Name: "61095542756dba551110ae21"}}},
		{"tags may hold dots and underscores", "proj/*:env/*;qa_1.x", "proj/*:env/*;qa_1.x",
			[]Segment{{Kind: "proj", Name: "*"}, {Kind: "env", Name: "*", Tags: []string{"qa_1.x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := mustParse(t, tt.in)
			if got := sp.String(); got != tt.canonical {
				t.Errorf("String() = %q, want %q", got, tt.canonical)
			}
			if !sp.Equal(Specifier{Segments: tt.segments}) {
				t.Errorf("segments = %#v, want %#v", sp.Segments, tt.segments)
			}
			again := mustParse(t, sp.String())
			if !again.Equal(sp) {
				t.Errorf("canonical form re-parses to %#v", again.Segments)
			}
		})
	}
}

func TestParseSpecifierRefusesMalformedInput(t *testing.T) {
	tests := []struct {
		name, in, reason string
	}{
		{"an empty string names nothing", "", `is empty`},
		{"a segment needs a slash", "proj/a:env", `segment 2 "env": missing "/" between kind and name (write kind/name, e.g. proj/*)`},
		{"a trailing colon leaves an empty segment", "proj/a:", `segment 2 is empty (a leading, trailing or doubled ":")`},
		{"a doubled colon leaves an empty segment", "proj/a::env/b", `segment 2 is empty (a leading, trailing or doubled ":")`},
		{"a leading slash leaves the kind empty", "proj/*:/flag/*", `segment 2 "/flag/*": kind is empty`},
		{"kinds are lower case", "Proj/a", `segment 1 "Proj/a": kind "Proj" must be lower-case letters, digits and "-", starting with a letter`},
		{"kinds start with a letter", "1proj/a", `segment 1 "1proj/a": kind "1proj" must be lower-case letters, digits and "-", starting with a letter`},
		{"kinds cannot hold underscores", "context_kind/a", `segment 1 "context_kind/a": kind "context_kind" must be lower-case letters, digits and "-", starting with a letter`},
		{"a name is required", "proj/", `segment 1 "proj/": name is empty (use "*" for any)`},
		{"a slash inside a name is refused, not escaped", "integration/datadog/abc", `segment 1 "integration/datadog/abc": name "datadog/abc" contains '/', a separator; escaping is not supported`},
		{"a backslash does not escape a separator", `proj/a\:b`, `segment 1 "proj/a\\": name "a\\" contains "\\"; escaping is not supported`},
		{"a backslash does not escape a semicolon", `proj/a\;b`, `segment 1 "proj/a\\;b": name "a\\" contains "\\"; escaping is not supported`},
		{"percent-encoding does not escape a slash", "proj/a%2Fb", `segment 1 "proj/a%2Fb": name "a%2Fb" contains '%'; only letters, digits, ".", "_", "-" (and "@", "+", "*" in names) are allowed`},
		{"a comma in a name is refused", "proj/a,b", `segment 1 "proj/a,b": name "a,b" contains ',', a separator; escaping is not supported`},
		{"spaces are refused", "proj/my shop", `segment 1 "proj/my shop": name "my shop" contains ' '; only letters, digits, ".", "_", "-" (and "@", "+", "*" in names) are allowed`},
		{"non-ASCII bytes are refused", "proj/caf\u00e9", `segment 1 "proj/café": name "café" contains byte 0xc3; only ASCII letters, digits, ".", "_", "-" (and "@", "+", "*" in names) are allowed`},
		{"a semicolon needs tags after it", "proj/a;", `segment 1 "proj/a;": tag list after ";" is empty`},
		{"empty tags are refused", "proj/a;x,,y", `segment 1 "proj/a;x,,y": tag 2 is empty`},
		{"tags are listed after one semicolon", "proj/a;x;y", `segment 1 "proj/a;x;y": more than one ";" (list tags once, separated by ",")`},
		{"tags are literal, not globs", "proj/*:env/*;qa_*", `segment 2 "env/*;qa_*": tag "qa_*": tags are literal, "*" is not allowed in a tag`},
		{"tags cannot hold a slash", "proj/a;x/y", `segment 1 "proj/a;x/y": tag "x/y" contains '/', a separator; escaping is not supported`},
		{"a specifier over 1,000 bytes is refused", "proj/" + strings.Repeat("a", 996), `is 1001 bytes, more than the limit of 1000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpecifier(tt.in)
			if err == nil {
				t.Fatalf("ParseSpecifier(%q) accepted it", tt.in)
			}
			if !fault.Is(err, fault.Invalid) {
				t.Errorf("code = %s, want %s", fault.CodeOf(err), fault.Invalid)
			}
			want := "resource specifier " + quoteShort(tt.in) + ": " + tt.reason
			if got := fault.MessageOf(err); got != want {
				t.Errorf("message\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

func TestSpecifierAtTheSizeLimitIsAccepted(t *testing.T) {
	s := "proj/" + strings.Repeat("a", MaxSpecifierBytes-len("proj/"))
	mustParse(t, s)
}

func TestResourceString(t *testing.T) {
	tests := []struct {
		name string
		r    Resource
		want string
	}{
		{"a project is kind and key", NewResource("proj", "shop"), "proj/shop"},
		{"children are joined by colons and tags follow their segment as in a specifier",
			NewResource("proj", "shop", "mobile").Child("env", "production", "critical", "eu").Child("flag", "new-checkout"),
			"proj/shop;mobile:env/production;critical,eu:flag/new-checkout"},
		{"the zero resource is empty", Resource{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChildrenOfOneParentDoNotShareStorage(t *testing.T) {
	parent := NewResource("proj", "shop").Child("env", "production")
	a := parent.Child("flag", "a")
	b := parent.Child("flag", "b")
	if a.String() != "proj/shop:env/production:flag/a" || b.String() != "proj/shop:env/production:flag/b" {
		t.Fatalf("children interfere: %s and %s", a, b)
	}
	if parent.String() != "proj/shop:env/production" || parent.Kind() != "env" || parent.Key() != "production" {
		t.Fatalf("parent changed: %s", parent)
	}
	segs := a.Segments()
	segs[0].Key = "changed"
	if a.String() != "proj/shop:env/production:flag/a" {
		t.Fatalf("Segments() exposes storage: %s", a)
	}
}

func TestSpecifierMatches(t *testing.T) {
	flag := func(proj, env, key string, envTags ...string) Resource {
		return NewResource("proj", proj).Child("env", env, envTags...).Child("flag", key)
	}
	tests := []struct {
		name, spec string
		r          Resource
		want       bool
	}{
		{"an exact specifier matches its resource", "proj/shop:env/production:flag/x", flag("shop", "production", "x"), true},
		{"a different key does not match", "proj/shop:env/production:flag/x", flag("shop", "production", "y"), false},
		{"a star matches any key", "proj/*:env/*:flag/*", flag("shop", "production", "x"), true},
		{"a star matches an empty key", "proj/*", NewResource("proj", ""), true},
		{"a prefix glob matches keys that start with it", "proj/*:env/prod-*:flag/*", flag("shop", "prod-eu", "x"), true},
		{"a prefix glob matches the prefix alone", "proj/*:env/prod-*:flag/*", flag("shop", "prod-", "x"), true},
		{"a prefix glob refuses other keys", "proj/*:env/prod-*:flag/*", flag("shop", "production", "x"), false},
		{"a suffix glob matches keys that end with it", "proj/*:env/*-eu:flag/*", flag("shop", "prod-eu", "x"), true},
		{"a suffix glob refuses other keys", "proj/*:env/*-eu:flag/*", flag("shop", "prod-us", "x"), false},
		{"an inner glob backtracks", "proj/a*b*c", NewResource("proj", "abxbybzc"), true},
		{"an inner glob needs every literal", "proj/a*b*c", NewResource("proj", "abxbybz"), false},
		{"a star in a key is a plain character", "proj/a", NewResource("proj", "*"), false},
		{"a shallower specifier does not match a deeper resource", "proj/*:env/*", flag("shop", "production", "x"), false},
		{"a deeper specifier does not match a shallower resource", "proj/*:env/*:flag/*:segment/*", flag("shop", "production", "x"), false},
		{"kinds must be the same in order", "proj/*:env/*:segment/*", flag("shop", "production", "x"), false},
		{"a top-level kind does not match a project", "webhook/*", NewResource("proj", "shop"), false},
		{"a pattern tag matches a resource carrying it", "proj/*:env/*;production:flag/*", flag("shop", "prod", "x", "production"), true},
		{"a pattern tag refuses a resource without it", "proj/*:env/*;production:flag/*", flag("shop", "prod", "x", "staging"), false},
		{"a pattern tag refuses an untagged resource", "proj/*:env/*;production:flag/*", flag("shop", "prod", "x"), false},
		{"any one of the pattern's tags is enough", "proj/*:env/*;critical,production:flag/*", flag("shop", "prod", "x", "staging", "production"), true},
		{"a pattern without tags ignores the resource's tags", "proj/*:env/*:flag/*", flag("shop", "prod", "x", "production"), true},
		{"tags are compared exactly", "proj/*:env/*;Production:flag/*", flag("shop", "prod", "x", "production"), false},
		{"nothing matches the zero resource", "proj/*", Resource{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.spec).Matches(tt.r); got != tt.want {
				t.Errorf("%s matches %s = %v, want %v", tt.spec, tt.r, got, tt.want)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"", "", true}, {"", "a", false},
		{"update*", "updateColor", true}, {"update*", "update", true}, {"update*", "createFlag", false},
		{"*Flag", "createFlag", true}, {"*Flag", "createFlags", false},
		{"*a*", "banana", true}, {"a*a", "a", false}, {"a*a", "aa", true},
		{"*x*y*", "axbyc", true}, {"*x*y*", "aybxc", false},
	}
	for _, tt := range tests {
		t.Run(tt.p+" against "+tt.s, func(t *testing.T) {
			if got := globMatch(tt.p, tt.s); got != tt.want {
				t.Errorf("globMatch(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
			}
		})
	}
}

func TestKnownKindsAreSortedForLookup(t *testing.T) {
	if !slices.IsSorted(knownKinds) {
		t.Fatalf("knownKinds must stay sorted: %v", knownKinds)
	}
	for _, k := range []string{"proj", "relay-proxy-config", "oauth-client", "webhook"} {
		if !IsKnownKind(k) {
			t.Errorf("IsKnownKind(%q) = false", k)
		}
	}
	if IsKnownKind("projet") {
		t.Errorf(`IsKnownKind("projet") = true`)
	}
}
