package oauth_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/token"
)

func TestValidRedirectURI(t *testing.T) {
	tests := []struct {
		name, uri string
		ok        bool
		mentions  string
	}{
		{"an https URL with a path and query is accepted", "https://app.example.com/callback?x=1", true, ""},
		{"an https URL with a port is accepted", "https://app.example.com:8443/cb", true, ""},
		{"an upper-case HTTPS scheme is accepted", "HTTPS://app.example.com/cb", true, ""},
		{"http on 127.0.0.1 is accepted", "http://127.0.0.1:8080/cb", true, ""},
		{"http anywhere in 127.0.0.0/8 is accepted", "http://127.1.2.3/cb", true, ""},
		{"http on ::1 is accepted", "http://[::1]:9000/cb", true, ""},
		{"http on localhost is accepted", "http://localhost:3000/cb", true, ""},
		{"http on LOCALHOST is accepted", "http://LOCALHOST/cb", true, ""},
		{"http on another host is refused", "http://example.com/cb", false, "loopback"},
		{"http on a private address is refused", "http://10.0.0.1/cb", false, "loopback"},
		{"http on a host that only starts with localhost is refused", "http://localhost.example.com/cb", false, "loopback"},
		{"http on 127.0.0.1 written as a name is refused", "http://127.0.0.1.nip.io/cb", false, "loopback"},
		{"a relative URL is refused", "/callback", false, "absolute"},
		{"a URL without a scheme is refused", "app.example.com/cb", false, "absolute"},
		{"a URL without a host is refused", "https:///cb", false, "host"},
		{"an opaque URL is refused", "https:app.example.com", false, "absolute"},
		{"a fragment is refused", "https://app.example.com/cb#frag", false, "fragment"},
		{"an empty fragment is refused", "https://app.example.com/cb#", false, "fragment"},
		{"userinfo is refused", "https://user:pass@app.example.com/cb", false, "user name"},
		{"a user name alone is refused", "https://user@app.example.com/cb", false, "user name"},
		{"another scheme is refused", "ftp://app.example.com/cb", false, "scheme"},
		{"a custom app scheme is refused", "com.example.app:/cb", false, "absolute"},
		{"a javascript URL is refused", "javascript:alert(1)", false, "absolute"},
		{"an empty value is refused", "", false, "required"},
		{"a value with a control character is refused", "https://app.example.com/\x00", false, "not a URL"},
		{"a very long URL is refused", "https://app.example.com/" + strings.Repeat("a", oauth.MaxRedirectURI), false, "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := oauth.ValidRedirectURI("redirectUri", tt.uri)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidRedirectURI(%q) = %v, want nil", tt.uri, err)
				}
				return
			}
			if !fault.Is(err, fault.Invalid) {
				t.Fatalf("ValidRedirectURI(%q) = %v, want a 400", tt.uri, err)
			}
			if msg := fault.MessageOf(err); !strings.Contains(msg, `"redirectUri"`) || !strings.Contains(msg, tt.mentions) {
				t.Errorf("message %q does not name the field and mention %q", msg, tt.mentions)
			}
		})
	}
}

// recorder keeps every item written to the table.
type recorder struct {
	store.Table
	mu      sync.Mutex
	written []store.Item
}

func (r *recorder) Put(ctx context.Context, it store.Item, c store.Cond) error {
	r.mu.Lock()
	r.written = append(r.written, it)
	r.mu.Unlock()
	return r.Table.Put(ctx, it, c)
}

func (r *recorder) Transact(ctx context.Context, ws []store.Write) error {
	r.mu.Lock()
	for _, w := range ws {
		r.written = append(r.written, w.Item)
	}
	r.mu.Unlock()
	return r.Table.Transact(ctx, ws)
}

// members is a fixed set of members by id.
type members map[string]*member.Member

func (m members) Get(_ context.Context, id string) (*member.Member, error) {
	if mm, ok := m[id]; ok {
		return mm, nil
	}
	return nil, fault.New(fault.NotFound, "member %q not found", id)
}

func newService(t *testing.T) (*oauth.Service, *recorder) {
	t.Helper()
	table, err := bolt.Open(filepath.Join(t.TempDir(), "oauth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	rec := &recorder{Table: table}
	ms := members{"m1": {ID: "m1", Role: "admin"}}
	return oauth.NewService(rec, audit.New(rec, audit.Discard{}, "acct", nil, time.Now), ms, time.Now), rec
}

func strPtr(s string) *string { return &s }

func TestTheSecretIsNeverStored(t *testing.T) {
	svc, rec := newService(t)
	ctx := context.Background()
	c, secret, err := svc.Create(ctx, oauth.Creator{MemberID: "m1", AccountID: "acct"},
		oauth.Input{Name: strPtr("CI"), RedirectURI: strPtr("https://ci.example.com/cb")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := patch.Parse([]byte(`[{"op":"replace","path":"/name","value":"CI 2"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Patch(ctx, c.ID, p); err != nil {
		t.Fatal(err)
	}
	issued, err := svc.Token(ctx, oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	hash := token.Hash(secret)
	clientKey := store.OAuthClientKey(c.ID)
	hashStored := false
	for _, it := range rec.written {
		data := string(it.Data)
		if strings.Contains(data, secret) {
			t.Errorf("item %s/%s holds the client secret: %s", it.PK, it.SK, data)
		}
		if strings.Contains(data, issued.AccessToken) {
			t.Errorf("item %s/%s holds the access token: %s", it.PK, it.SK, data)
		}
		if it.Key() == clientKey {
			hashStored = hashStored || strings.Contains(data, hash)
		} else if strings.Contains(data, hash) {
			t.Errorf("item %s/%s, not the client, holds the secret's hash: %s", it.PK, it.SK, data)
		}
	}
	if !hashStored {
		t.Error("the client item never held the secret's hash")
	}
}

func TestTokenRefusals(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	c, secret, err := svc.Create(ctx, oauth.Creator{MemberID: "m1", AccountID: "acct"},
		oauth.Input{Name: strPtr("CI"), RedirectURI: strPtr("https://ci.example.com/cb")})
	if err != nil {
		t.Fatal(err)
	}
	gone, goneSecret, err := svc.Create(ctx, oauth.Creator{MemberID: "departed", AccountID: "acct"},
		oauth.Input{Name: strPtr("Orphan"), RedirectURI: strPtr("https://ci.example.com/cb")})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  oauth.TokenRequest
		code string
	}{
		{"a missing grant type is an invalid request", oauth.TokenRequest{ClientID: c.ID, ClientSecret: secret}, oauth.InvalidRequest},
		{"another grant type is unsupported", oauth.TokenRequest{GrantType: "password", ClientID: c.ID, ClientSecret: secret}, oauth.UnsupportedGrantType},
		{"an unknown scope is invalid", oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret, Scope: "admin"}, oauth.InvalidScope},
		{"two scopes are invalid", oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret, Scope: "reader writer"}, oauth.InvalidScope},
		{"a wrong secret fails client authentication", oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret + "x"}, oauth.InvalidClient},
		{"another client's secret fails client authentication", oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: goneSecret}, oauth.InvalidClient},
		{"an unknown client fails client authentication", oauth.TokenRequest{GrantType: "client_credentials", ClientID: "9b2f7f0e-2c8a-4a55-9d33-2f1a3c2b7e10", ClientSecret: secret}, oauth.InvalidClient},
		{"a malformed client id fails client authentication", oauth.TokenRequest{GrantType: "client_credentials", ClientID: "OAUTHCLIENT#x", ClientSecret: secret}, oauth.InvalidClient},
		{"no credentials fail client authentication", oauth.TokenRequest{GrantType: "client_credentials"}, oauth.InvalidClient},
		{"a client whose member left is unauthorized", oauth.TokenRequest{GrantType: "client_credentials", ClientID: gone.ID, ClientSecret: goneSecret}, oauth.UnauthorizedClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Token(ctx, tt.req)
			var e *oauth.Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Description == "" {
				t.Fatalf("Token = %v, want %s with a description", err, tt.code)
			}
		})
	}
	t.Run("the default scope is reader and the token lives an hour", func(t *testing.T) {
		got, err := svc.Token(ctx, oauth.TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		if got.Scope != "reader" || got.TokenType != "Bearer" || got.ExpiresIn != 3600 || !strings.HasPrefix(got.AccessToken, "api-") {
			t.Errorf("issued %+v", got)
		}
	})
}

func TestCreateNeedsAMember(t *testing.T) {
	svc, _ := newService(t)
	_, _, err := svc.Create(context.Background(), oauth.Creator{AccountID: "acct"},
		oauth.Input{Name: strPtr("CI"), RedirectURI: strPtr("https://ci.example.com/cb")})
	if !fault.Is(err, fault.Invalid) || !strings.Contains(fault.MessageOf(err), "member") {
		t.Fatalf("Create without a member = %v, want a 400 about members", err)
	}
}
