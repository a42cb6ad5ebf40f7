package token_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
	"github.com/flagplane/flagplane/shared/token"
)

// clock is a settable time the service and the authenticator read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// members are the grants of a test: built-in roles only, and members by id.
type members map[string]string

func (members) Roles(context.Context, []string) ([]policy.Grant, bool, error) { return nil, false, nil }
func (members) RoleIDs(_ context.Context, refs []string) ([]string, error) {
	return make([]string, len(refs)), nil
}
func (m members) Member(_ context.Context, id string) (string, []string, string, error) {
	role, ok := m[id]
	if !ok {
		return "", nil, "", fault.New(fault.NotFound, "member %q not found", id)
	}
	return role, nil, id + "@example.com", nil
}

type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	clock *clock
	authn *token.Authenticator
	svc   *token.Service
	// owner is the context of an owner member's token, able to make any token.
	owner context.Context
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	c := &clock{t: time.Now().Truncate(time.Millisecond)}
	a := audittest.New(tb, c.now)
	b, log := a.Table, a.Log
	grants := members{"boss": "owner"}
	authn := token.NewAuthenticator(b, grants, c.now)
	r := &rig{table: b, log: log, clock: c, authn: authn, svc: token.NewService(b, log, grants, authn, c.now)}
	_, value, err := token.Create(context.Background(), log, token.Spec{Name: "boss's", Role: identity.RoleOwner, MemberID: "boss"}, "acct")
	if err != nil {
		tb.Fatal(err)
	}
	r.owner = r.as(tb, value)
	return r
}

// as is the context of the caller presenting value.
func (r *rig) as(tb testing.TB, value string) context.Context {
	tb.Helper()
	p, err := r.authn.Authenticate(context.Background(), value)
	if err != nil {
		tb.Fatal(err)
	}
	return identity.With(context.Background(), p)
}

func (r *rig) create(tb testing.TB, ctx context.Context, in token.Input) (token.Token, string) {
	tb.Helper()
	t, value, err := r.svc.CreateFor(ctx, in)
	if err != nil {
		tb.Fatal(err)
	}
	return t, value
}

func mustPatch(tb testing.TB, body string) patch.Patch {
	tb.Helper()
	p, err := patch.Parse([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestParseMillis(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want int64
		bad  bool
	}{
		{"a number is read as is", `1700000000000`, 1700000000000, false},
		{"a numeric string is read as a number", `"1700000000000"`, 1700000000000, false},
		{"null is never", `null`, 0, false},
		{"absent is never", ``, 0, false},
		{"a negative number is refused", `-5`, 0, true},
		{"a word is refused", `"soon"`, 0, true},
		{"a fraction is refused", `1.5`, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := token.ParseMillis("expiry", json.RawMessage(c.raw))
			if c.bad {
				faulttest.Want(t, err, fault.Invalid, `"expiry"`)
				return
			}
			if err != nil || got != c.want {
				t.Errorf("ParseMillis(%s) = %d, %v; want %d", c.raw, got, err, c.want)
			}
		})
	}
}

func TestCreateRefusals(t *testing.T) {
	r := newRig(t)
	_, readerValue := r.create(t, r.owner, token.Input{Name: "reader svc", Role: "reader", ServiceToken: true})
	cases := []struct {
		name string
		ctx  context.Context
		in   token.Input
		code fault.Code
		part string
	}{
		{"a blank name is refused naming the field", r.owner, token.Input{Name: " ", Role: "reader"}, fault.Invalid, `"name"`},
		{"a long description is refused naming the field", r.owner, token.Input{Name: "n", Role: "reader", Description: strings.Repeat("d", 1025)}, fault.Invalid, `"description"`},
		{"a token with no rights at all is refused", r.owner, token.Input{Name: "n"}, fault.Invalid, `"role"`},
		{"an unknown built-in role is refused naming it", r.owner, token.Input{Name: "n", Role: "boss"}, fault.Invalid, `"boss"`},
		{"an expiry in the past is refused", r.owner, token.Input{Name: "n", Role: "reader", Expiry: json.RawMessage(`1`)}, fault.Invalid, `"expiry"`},
		{"a negative API version is refused", r.owner, token.Input{Name: "n", Role: "reader", DefaultAPIVersion: -1}, fault.Invalid, `"defaultApiVersion"`},
		{"a caller with no token makes no token", context.Background(), token.Input{Name: "n", Role: "reader", ServiceToken: true}, fault.Forbidden, "only an access token"},
		{"a service token makes no member token", r.as(t, readerValue), token.Input{Name: "n", Role: "reader"}, fault.Invalid, `"serviceToken"`},
		{"a reader cannot make a writer token", r.as(t, readerValue), token.Input{Name: "n", Role: "writer", ServiceToken: true}, fault.Forbidden, "rights the caller does not"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := r.svc.CreateFor(c.ctx, c.in)
			faulttest.Want(t, err, c.code, c.part)
		})
	}
}

func TestAuthenticate(t *testing.T) {
	r := newRig(t)
	expiry := r.clock.now().Add(time.Hour).UnixMilli()
	tok, value := r.create(t, r.owner, token.Input{Name: "brief", Role: "writer", Expiry: json.RawMessage(`"` + itoa(expiry) + `"`)})

	t.Run("only the hash of the value is stored, and it finds the token", func(t *testing.T) {
		if tok.Hash != token.Hash(value) || strings.Contains(tok.Hash, value) || tok.Ending != value[len(value)-4:] {
			t.Errorf("token hash %q ending %q for value %q", tok.Hash, tok.Ending, value)
		}
		it, err := r.table.Get(context.Background(), store.TokenHashKey(token.Hash(value)))
		if err != nil || strings.Contains(string(it.Data), value) {
			t.Errorf("lookup %s, %v", it.Data, err)
		}
	})
	t.Run("the value resolves to the member's principal with the token's role", func(t *testing.T) {
		p, err := r.authn.Authenticate(context.Background(), value)
		if err != nil || p.TokenID != tok.ID || p.MemberID != "boss" || p.Role != identity.RoleWriter || p.MemberRole != identity.RoleOwner || p.MemberEmail != "boss@example.com" {
			t.Errorf("principal %+v, %v", p, err)
		}
	})
	refused := []struct {
		name, value, part string
	}{
		{"a value without the api- prefix is refused", "key-" + value[4:], "not valid"},
		{"an unknown value is refused", token.NewValue(), "not valid"},
		{"an overlong value is refused", "api-" + strings.Repeat("x", 200), "not valid"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.authn.Authenticate(context.Background(), c.value)
			faulttest.Want(t, err, fault.Unauthorized, c.part)
		})
	}
	t.Run("the token works up to its expiry and not at it", func(t *testing.T) {
		r.clock.advance(time.UnixMilli(expiry - 1).Sub(r.clock.now()))
		if _, err := r.authn.Authenticate(context.Background(), value); err != nil {
			t.Fatalf("a millisecond before expiry: %v", err)
		}
		r.clock.advance(time.Millisecond)
		_, err := r.authn.Authenticate(context.Background(), value)
		faulttest.Want(t, err, fault.Unauthorized, "expired")
	})
}

// itoa formats ms for a JSON string.
func itoa(ms int64) string { b, _ := json.Marshal(ms); return string(b) }

func TestAuthenticatorCache(t *testing.T) {
	r := newRig(t)
	_, value := r.create(t, r.owner, token.Input{Name: "cached", Role: "reader", ServiceToken: true})
	other := token.NewAuthenticator(r.table, members{}, r.clock.now)
	if _, err := other.Authenticate(context.Background(), value); err != nil {
		t.Fatal(err)
	}
	list, err := r.svc.List(r.owner, true)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, tk := range list {
		if tk.Name == "cached" {
			id = tk.ID
		}
	}
	if err := r.svc.Delete(r.owner, id); err != nil {
		t.Fatal(err)
	}
	t.Run("the deleting process refuses the value at once", func(t *testing.T) {
		_, err := r.authn.Authenticate(context.Background(), value)
		faulttest.Want(t, err, fault.Unauthorized, "not valid")
	})
	t.Run("another process trusts its cache for up to CacheTTL", func(t *testing.T) {
		r.clock.advance(token.CacheTTL)
		if _, err := other.Authenticate(context.Background(), value); err != nil {
			t.Errorf("within the cache window: %v", err)
		}
	})
	t.Run("and refuses the value once the window has passed", func(t *testing.T) {
		r.clock.advance(time.Millisecond)
		_, err := other.Authenticate(context.Background(), value)
		faulttest.Want(t, err, fault.Unauthorized, "not valid")
	})
}

func TestLastUsedIsWrittenAtMostOncePerInterval(t *testing.T) {
	r := newRig(t)
	tok, value := r.create(t, r.owner, token.Input{Name: "used", Role: "reader"})
	first := r.clock.now()
	seen := func(tb testing.TB) int64 {
		tb.Helper()
		if _, err := r.authn.Authenticate(context.Background(), value); err != nil {
			tb.Fatal(err)
		}
		got, err := r.svc.Get(r.owner, tok.ID)
		if err != nil {
			tb.Fatal(err)
		}
		ls, ok, err := r.svc.MemberLastSeen(context.Background(), "boss")
		if err != nil || !ok || ls.At != got.LastUsed {
			tb.Errorf("member last seen %+v %v %v, token last used %d", ls, ok, err, got.LastUsed)
		}
		return got.LastUsed
	}
	steps := []struct {
		name    string
		advance time.Duration
		want    time.Time
	}{
		{"the first use is recorded", 0, first},
		{"a use within the interval is not recorded again", token.LastUsedInterval - time.Millisecond, first},
		{"a use after the interval is recorded", time.Millisecond, first.Add(token.LastUsedInterval)},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r.clock.advance(s.advance)
			if got := seen(t); got != s.want.UnixMilli() {
				t.Errorf("lastUsed %d, want %d", got, s.want.UnixMilli())
			}
		})
	}
}

func TestResetGracePeriod(t *testing.T) {
	r := newRig(t)
	tok, old := r.create(t, r.owner, token.Input{Name: "rotated", Role: "reader", ServiceToken: true})
	grace := r.clock.now().Add(time.Hour).UnixMilli()
	reset, value, err := r.svc.Reset(r.owner, tok.ID, grace)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the new value works and the token keeps the old value's hash for the grace", func(t *testing.T) {
		if reset.Hash != token.Hash(value) || reset.GraceHash != token.Hash(old) || reset.GraceExpiry != grace || reset.Version != 2 {
			t.Errorf("reset %+v", reset)
		}
		if _, err := r.authn.Authenticate(context.Background(), value); err != nil {
			t.Error(err)
		}
	})
	t.Run("the old value works until the grace ends", func(t *testing.T) {
		if _, err := r.authn.Authenticate(context.Background(), old); err != nil {
			t.Fatal(err)
		}
		r.clock.advance(time.Hour)
		_, err := r.authn.Authenticate(context.Background(), old)
		faulttest.Want(t, err, fault.Unauthorized, "expired")
	})
	t.Run("a grace ending in the past is refused", func(t *testing.T) {
		_, _, err := r.svc.Reset(r.owner, tok.ID, r.clock.now().UnixMilli())
		faulttest.Want(t, err, fault.Invalid, `"expiry"`)
	})
	t.Run("a second reset ends the first one's grace at once", func(t *testing.T) {
		if _, _, err := r.svc.Reset(r.owner, tok.ID, 0); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{old, value} {
			if _, err := r.table.Get(context.Background(), store.TokenHashKey(token.Hash(v))); err == nil {
				t.Errorf("the lookup of an earlier value is still stored")
			}
		}
	})
}

func TestConcurrentPatchesOneWinsTheOtherIsRefused(t *testing.T) {
	r := newRig(t)
	tok, _ := r.create(t, r.owner, token.Input{Name: "contested", Role: "reader", ServiceToken: true})
	names := []string{"first", "second"}
	errs := r.table.Race(len(names), func(i int) error {
		_, err := r.svc.Patch(r.owner, tok.ID, mustPatch(t, `[{"op":"replace","path":"/name","value":"`+names[i]+`"}]`))
		return err
	})
	faulttest.OneWins(t, errs, fault.OptimisticLock)
	got, err := r.svc.Get(r.owner, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if won := names[slices.Index(errs, nil)]; got.Name != won || got.Version != 2 {
		t.Errorf("stored %q at version %d, want the winner's %q at 2", got.Name, got.Version, won)
	}
	if a := audittest.Actions(t, r.log); strings.Count(strings.Join(a, " "), "updateTokenName") != 1 {
		t.Errorf("audit actions %v, want one rename", a)
	}
}

func TestEveryChangeIsAudited(t *testing.T) {
	r := newRig(t)
	tok, _ := r.create(t, r.owner, token.Input{Name: "audited", Role: "reader"})
	if _, err := r.svc.Patch(r.owner, tok.ID, mustPatch(t, `[{"op":"replace","path":"/description","value":"d"},{"op":"replace","path":"/role","value":"writer"}]`)); err != nil {
		t.Fatal(err)
	}
	t.Run("a patch that changes nothing writes no entry", func(t *testing.T) {
		if _, err := r.svc.Patch(r.owner, tok.ID, mustPatch(t, `[{"op":"replace","path":"/description","value":"d"}]`)); err != nil {
			t.Fatal(err)
		}
	})
	if _, _, err := r.svc.Reset(r.owner, tok.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Delete(r.owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	want := "createAccessToken createAccessToken updateTokenDescription updateTokenRole resetAccessToken deleteAccessToken"
	if got := strings.Join(audittest.Actions(t, r.log), " "); got != want {
		t.Errorf("audit actions %q, want %q", got, want)
	}
	t.Run("a deleted token is not found", func(t *testing.T) {
		_, err := r.svc.Get(r.owner, tok.ID)
		faulttest.Want(t, err, fault.NotFound, tok.ID)
	})
}

func TestVisibility(t *testing.T) {
	mine := token.Token{MemberID: "m1"}
	service := token.Token{ServiceToken: true}
	cases := []struct {
		name  string
		p     identity.Principal
		tok   token.Token
		admin bool
		sees  bool
	}{
		{"a member sees its own tokens", identity.Principal{MemberID: "m1", Role: "reader", MemberRole: "reader"}, mine, false, true},
		{"a member does not see another member's", identity.Principal{MemberID: "m2", Role: "reader", MemberRole: "reader"}, mine, false, false},
		{"a member does not see service tokens", identity.Principal{MemberID: "m2", Role: "writer", MemberRole: "writer"}, service, false, false},
		{"an admin member's admin token sees every token", identity.Principal{MemberID: "m2", Role: "admin", MemberRole: "owner"}, service, true, true},
		{"an admin token of a reader member is no admin", identity.Principal{MemberID: "m2", Role: "admin", MemberRole: "reader"}, mine, false, false},
		{"an owner service token is an admin", identity.Principal{Role: "owner", ServiceToken: true}, mine, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if a, v := token.IsAdmin(c.p), token.Visible(c.p, c.tok); a != c.admin || v != c.sees {
				t.Errorf("IsAdmin %v, Visible %v; want %v, %v", a, v, c.admin, c.sees)
			}
		})
	}
}
