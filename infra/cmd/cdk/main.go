// Command cdk is the CDK app of flagplane; cdk.json at the repository root
// runs it (`npx cdk synth`, `npx cdk deploy`). It only wires the context
// into infra.NewFlagplaneStack; the stack itself lives in package infra.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/flagplane/flagplane/infra"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flagplane cdk:", err)
		os.Exit(1)
	}
}

func run() error {
	// Instead of jsii.Close (see IsolateJSII for why).
	cleanup, err := infra.IsolateJSII()
	if err != nil {
		return err
	}
	defer cleanup()

	app := awscdk.NewApp(nil)
	settings, err := infra.SettingsFromContext(func(key string) (string, bool) {
		v := app.Node().TryGetContext(jsii.String(key))
		if v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	})
	if err != nil {
		return err
	}
	props := settings.Props
	props.Env = env()
	if err := props.Check(); err != nil {
		return err
	}
	infra.NewFlagplaneStack(app, settings.StackName, &props)
	app.Synth(nil)
	return nil
}

// env pins the stack to the CLI's account and region when it knows them
// (credentials configured, or cdklocal); offline the stack stays
// environment-agnostic and synthesizes without any AWS call.
func env() *awscdk.Environment {
	account, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION")
	if account == "" || region == "" {
		return nil
	}
	return &awscdk.Environment{Account: jsii.String(account), Region: jsii.String(region)}
}
