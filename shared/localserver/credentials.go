package localserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/dynamo"
)

// BackfillConfig says on which store "credentials backfill" runs.
type BackfillConfig struct {
	// DataFile is the embedded store's file, unless Dynamo is set.
	DataFile string
	// Dynamo uses the DynamoDB table named Table instead.
	Dynamo bool
	Table  string
}

// BackfillCredentials runs "credentials backfill": it writes the
// credential items of environments made before the credential index, on
// the data file or the DynamoDB table, and prints how many it wrote. It
// is safe to run again, and beside a deployment serving the table.
func BackfillCredentials(ctx context.Context, cfg BackfillConfig, out io.Writer) (err error) {
	var table store.Table
	if cfg.Dynamo {
		if cfg.Table == "" {
			return errors.New("-table is required with -dynamo: name the DynamoDB table")
		}
		// The command line uses the SDK's full configuration (profiles, SSO).
		client, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		t, err := dynamo.New(client, cfg.Table, dynamo.Options{})
		if err != nil {
			return fmt.Errorf("open table %s: %w", cfg.Table, err)
		}
		table = t
	} else {
		if _, err := os.Stat(cfg.DataFile); err != nil {
			return fmt.Errorf("data file: %w", err)
		}
		t, err := bolt.Open(cfg.DataFile)
		if errors.Is(err, bolt.ErrInUse) {
			return fmt.Errorf("%s is in use by another process, most likely a running flagplane server, "+
				"which backfills the credentials itself when it starts: %w", cfg.DataFile, err)
		}
		if err != nil {
			return err
		}
		defer func() {
			if cerr := t.Close(); err == nil {
				err = cerr
			}
		}()
		table = t
	}
	n, err := environment.BackfillCredentials(ctx, table)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %d missing credential items\n", n)
	return nil
}
