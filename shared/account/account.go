// Package account holds the account record and the first-start bootstrap
// that creates it together with the first admin access token.
package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/token"
)

// Account is the one account a flagplane deployment serves.
type Account struct {
	ID           string `json:"_id"`
	CreationDate int64  `json:"creationDate"`
}

// Load returns the account, or an error wrapping fault.NotFound before bootstrap.
func Load(ctx context.Context, table store.Table) (Account, error) {
	it, err := table.Get(ctx, store.AccountKey())
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, fault.Wrap(err, fault.NotFound, "the account has not been set up yet")
	}
	if err != nil {
		return Account{}, fmt.Errorf("load account: %w", err)
	}
	var a Account
	if err := json.Unmarshal(it.Data, &a); err != nil {
		return Account{}, fmt.Errorf("decode account: %w", err)
	}
	return a, nil
}

// DefaultOwnerEmail is the owner's email when the operator names none.
const DefaultOwnerEmail = "owner@flagplane.local"

// Bootstrap is BootstrapOwner with the default owner email.
func Bootstrap(ctx context.Context, table store.Table, publisher audit.Publisher, logger *slog.Logger) (Account, string, error) {
	return BootstrapOwner(ctx, table, publisher, logger, DefaultOwnerEmail)
}

// BootstrapOwner creates, on the first start, the account, its owner member
// and an admin token of that member, atomically. On later starts (or when
// another process won the race) it returns the existing account and an
// empty token value.
func BootstrapOwner(ctx context.Context, table store.Table, publisher audit.Publisher, logger *slog.Logger, ownerEmail string) (Account, string, error) {
	a, err := Load(ctx, table)
	if err == nil {
		return a, "", nil
	}
	if !fault.Is(err, fault.NotFound) {
		return Account{}, "", err
	}
	now := time.Now()
	a = Account{ID: uuid.NewString(), CreationDate: now.UnixMilli()}
	data, err := json.Marshal(a)
	if err != nil {
		return Account{}, "", fmt.Errorf("encode account: %w", err)
	}
	owner, err := member.New(member.Invite{Email: &ownerEmail, FirstName: "Account", LastName: "Owner", Role: "reader"}, "owner.", now)
	if err != nil {
		return Account{}, "", err
	}
	owner.Role, owner.PendingInvite, owner.Verified = "owner", false, true
	ownerWrites, err := owner.Writes()
	if err != nil {
		return Account{}, "", err
	}
	t, value, writes, err := token.Issue(token.Spec{Name: "bootstrap admin", Role: identity.RoleAdmin, MemberID: owner.ID}, a.ID, now)
	if err != nil {
		return Account{}, "", err
	}
	ak := store.AccountKey()
	writes = append(append([]store.Write{store.Put(store.Item{PK: ak.PK, SK: ak.SK, Version: 1, Data: data}, store.IfNotExists())}, ownerWrites...), writes...)
	log := audit.New(table, publisher, a.ID, logger, time.Now)
	_, err = log.Commit(ctx, token.CreateChange(t, writes))
	var txErr *store.TxError
	if errors.As(err, &txErr) && txErr.Index == 0 {
		// Another process bootstrapped first; its token was printed there.
		existing, err := Load(ctx, table)
		return existing, "", err
	}
	if err != nil {
		return Account{}, "", fmt.Errorf("bootstrap account: %w", err)
	}
	return a, value, nil
}
