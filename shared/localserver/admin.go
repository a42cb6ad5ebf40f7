package localserver

import (
	"context"
	"flag"
	"fmt"
	"github.com/flagplane/flagplane/shared/app"
	"io"
	"log/slog"
	"os"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/token"
)

// TokenCommand runs "token create": it issues a service token on the local
// data file or, with -dynamo, on the table named by FLAGPLANE_TABLE. On a
// store that was never set up it sets up the account and issues the admin
// token instead. The value is printed once.
func TokenCommand(ctx context.Context, args []string, out io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("usage: flagplane token create -name NAME [-role reader|writer|admin] [-data FILE | -dynamo]")
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	name := fs.String("name", "", "token name")
	role := fs.String("role", string(identity.RoleAdmin), "reader, writer or admin")
	data := fs.String("data", "flagplane.db", "embedded store file")
	useDynamo := fs.Bool("dynamo", false, "use the DynamoDB table named by "+app.EnvTable)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	r := identity.Role(*role)
	if r != identity.RoleReader && r != identity.RoleWriter && r != identity.RoleAdmin {
		return fmt.Errorf("-role must be reader, writer or admin, not %q", *role)
	}
	if *name == "" {
		return fmt.Errorf("-name is required")
	}
	var table store.Table
	if *useDynamo {
		// The command line uses the SDK's full configuration (profiles, SSO).
		name := os.Getenv(app.EnvTable)
		if name == "" {
			return fmt.Errorf("%s is not set: name the DynamoDB table", app.EnvTable)
		}
		client, err := dynamo.NewClient(ctx)
		if err != nil {
			return err
		}
		t, err := dynamo.New(client, name, dynamo.Options{})
		if err != nil {
			return err
		}
		table = t
	} else {
		t, err := bolt.Open(*data)
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
	log := audit.New(table, audit.Discard{}, acct.ID, logger)
	_, value, err := token.Create(ctx, log, token.Spec{Name: *name, Role: r, ServiceToken: true}, acct.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", value)
	return nil
}

// TableCommand runs "table create -name NAME": it creates the DynamoDB
// table exactly as the stack does, on the endpoint of the standard
// AWS_ENDPOINT_URL* settings (DynamoDB Local, LocalStack or AWS).
func TableCommand(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("usage: flagplane table create -name NAME")
	}
	fs := flag.NewFlagSet("table create", flag.ContinueOnError)
	name := fs.String("name", "", "table name")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *name == "" {
		return fmt.Errorf("-name is required")
	}
	client, err := dynamo.NewClient(ctx)
	if err != nil {
		return err
	}
	if err := dynamo.CreateTable(ctx, client, *name); err != nil {
		return err
	}
	fmt.Fprintf(out, "created table %s\n", *name)
	return nil
}
