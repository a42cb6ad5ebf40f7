package account_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/token"
)

// failing is a table whose transactions all fail, as a store that is down.
type failing struct{ store.Table }

func (failing) Transact(context.Context, []store.Write) error { return errors.New("store unavailable") }

// open is a fresh store; the bootstrap makes its own audit log over it.
func open(tb testing.TB) store.Table { return audittest.New(tb, time.Now).Table }

var quiet = audittest.Quiet

func TestBootstrap(t *testing.T) {
	table := open(t)
	ctx := context.Background()
	t.Run("before the first start there is no account", func(t *testing.T) {
		_, err := account.Load(ctx, table)
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("Load = %v, want not found", err)
		}
	})

	// Racing first starts: exactly one creates the account and prints a token.
	const starts = 4
	accounts := make([]account.Account, starts)
	values := make([]string, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if accounts[i], values[i], err = account.BootstrapOwner(ctx, table, audit.Discard{}, quiet, "Boss@Example.com"); err != nil {
				t.Errorf("bootstrap: %v", err)
			}
		}()
	}
	wg.Wait()
	var value string
	for i := range starts {
		if values[i] != "" {
			if value != "" {
				t.Fatal("two starts both printed a token")
			}
			value = values[i]
		}
		if accounts[i].ID == "" || accounts[i] != accounts[0] {
			t.Errorf("start %d answered account %+v, start 0 %+v", i, accounts[i], accounts[0])
		}
	}
	t.Run("racing first starts make one account and one token", func(t *testing.T) {
		if value == "" {
			t.Fatal("no start printed a token")
		}
	})
	t.Run("the token is an admin token of the owner member, in the account", func(t *testing.T) {
		p, err := token.NewAuthenticator(table, nil, time.Now).Authenticate(ctx, value)
		if err != nil {
			t.Fatal(err)
		}
		if p.Role != identity.RoleAdmin || p.MemberID == "" || p.AccountID != accounts[0].ID {
			t.Errorf("principal %+v", p)
		}
		if _, err := table.Get(ctx, store.MemberEmailKey("boss@example.com")); err != nil {
			t.Errorf("the owner's email (normalised) is not reserved: %v", err)
		}
	})
	t.Run("a later start answers the account and no token", func(t *testing.T) {
		a, v, err := account.Bootstrap(ctx, table, audit.Discard{}, quiet)
		if err != nil || v != "" || a != accounts[0] {
			t.Errorf("bootstrap = %+v, %q, %v", a, v, err)
		}
	})
	t.Run("the bootstrap is one audit entry, the token's creation", func(t *testing.T) {
		res, err := audit.New(table, audit.Discard{}, accounts[0].ID, quiet, time.Now).List(ctx, audit.ListQuery{Limit: 10})
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Accesses[0].Action != "createAccessToken" {
			t.Errorf("entries %+v, %v", res.Entries, err)
		}
	})
}

func TestBootstrapRefusals(t *testing.T) {
	t.Run("an owner email that is no address is refused naming the field", func(t *testing.T) {
		_, _, err := account.BootstrapOwner(context.Background(), open(t), audit.Discard{}, quiet, "not an email")
		if !fault.Is(err, fault.Invalid) || !strings.Contains(fault.MessageOf(err), `"owner.email"`) {
			t.Errorf("error %v, want invalid naming owner.email", err)
		}
	})
	t.Run("a store that fails is an error, not an account", func(t *testing.T) {
		a, v, err := account.Bootstrap(context.Background(), failing{open(t)}, audit.Discard{}, quiet)
		if err == nil || v != "" || a.ID != "" {
			t.Errorf("bootstrap = %+v, %q, %v", a, v, err)
		}
	})
}
