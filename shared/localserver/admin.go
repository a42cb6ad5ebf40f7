package localserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/token"
)

// TokenConfig says which token "token create" makes, and on which store.
type TokenConfig struct {
	Name string
	Role identity.Role
	// DataFile is the embedded store's file, unless Dynamo is set.
	DataFile string
	// Dynamo uses the DynamoDB table named by FLAGPLANE_TABLE instead.
	Dynamo bool
}

// CreateToken runs "token create": it issues a service token on the local
// data file or on the DynamoDB table. On a store that was never set up it
// sets up the account and issues the admin token instead. The value is
// printed once.
func CreateToken(ctx context.Context, cfg TokenConfig, out io.Writer, logger *slog.Logger) error {
	if cfg.Role != identity.RoleReader && cfg.Role != identity.RoleWriter && cfg.Role != identity.RoleAdmin {
		return fmt.Errorf("-role must be reader, writer or admin, not %q", cfg.Role)
	}
	if cfg.Name == "" {
		return fmt.Errorf("-name is required")
	}
	var table store.Table
	if cfg.Dynamo {
		// The command line uses the SDK's full configuration (profiles, SSO).
		name := os.Getenv(app.EnvTable)
		if name == "" {
			return fmt.Errorf("%s is not set: name the DynamoDB table", app.EnvTable)
		}
		client, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		t, err := dynamo.New(client, name, dynamo.Options{})
		if err != nil {
			return err
		}
		table = t
	} else {
		t, err := bolt.Open(cfg.DataFile)
		if errors.Is(err, bolt.ErrInUse) {
			return fmt.Errorf("%s is in use by another process, most likely a running flagplane server. "+
				"Stop the server and run this again, or ask the running server for a token: "+
				"POST /api/v2/tokens with an admin token (see README.md, Operations): %w", cfg.DataFile, err)
		}
		if err != nil {
			return err
		}
		defer t.Close()
		table = t
	}
	acct, adminToken, err := account.Bootstrap(ctx, table, audit.Discard{}, logger)
	if err != nil {
		return err
	}
	if adminToken != "" {
		fmt.Fprintf(out, "The store was new: flagplane set up the account and created an admin token (shown once):\n%s\n", adminToken)
		return nil
	}
	log := audit.New(table, audit.Discard{}, acct.ID, logger, time.Now)
	_, value, err := token.Create(ctx, log, token.Spec{Name: cfg.Name, Role: cfg.Role, ServiceToken: true}, acct.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", value)
	return nil
}

// CreateTable runs "table create": it creates the DynamoDB table exactly
// as the stack does, on the endpoint of the standard AWS_ENDPOINT_URL*
// settings (DynamoDB Local, LocalStack or AWS).
func CreateTable(ctx context.Context, name string, out io.Writer) error {
	if name == "" {
		return fmt.Errorf("-name is required")
	}
	client, err := dynamoClient(ctx)
	if err != nil {
		return err
	}
	if err := dynamo.CreateTable(ctx, client, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "created table %s\n", name)
	return nil
}
