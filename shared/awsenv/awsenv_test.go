package awsenv

import (
	"testing"
)

func TestConfig(t *testing.T) {
	t.Run("region and credentials come from the environment", func(t *testing.T) {
		t.Setenv("AWS_REGION", "eu-west-1")
		t.Setenv("AWS_ACCESS_KEY_ID", "id")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		t.Setenv("AWS_SESSION_TOKEN", "session")
		cfg, err := Config()
		if err != nil {
			t.Fatal(err)
		}
		creds, err := cfg.Credentials.Retrieve(t.Context())
		if err != nil || cfg.Region != "eu-west-1" || creds.AccessKeyID != "id" || creds.SessionToken != "session" {
			t.Fatalf("config %+v, creds %+v, %v", cfg.Region, creds, err)
		}
	})
	t.Run("a missing region is an error", func(t *testing.T) {
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		if _, err := Config(); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("a service endpoint wins over the general one", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000")
		if got := *Endpoint("dynamodb"); got != "http://127.0.0.1:8000" {
			t.Fatalf("dynamodb endpoint %s", got)
		}
		if got := *Endpoint("sqs"); got != "http://127.0.0.1:4566" {
			t.Fatalf("sqs endpoint %s", got)
		}
	})
}
