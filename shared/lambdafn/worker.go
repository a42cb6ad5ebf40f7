package lambdafn

import (
	"context"
	"log"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
)

// ServeWorker runs the named worker of group once per invocation: the
// scheduled function of that work. It does not return.
func ServeWorker(group app.NewGroup, name string) {
	a, _, err := app.FromEnv(context.Background(), group)
	if err != nil {
		log.Fatalf("flagplane %s: %v", name, err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := a.CheckWorker(name); err != nil {
		log.Fatalf("flagplane %s: %v", name, err)
	}
	lambda.Start(func(ctx context.Context) error { return a.RunWorker(ctx, name, logger) })
}
