package featurestoreapi_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flagplane/flagplane/shared/featurestore"
	"github.com/flagplane/flagplane/shared/featurestore/dynamostore"
	"github.com/flagplane/flagplane/shared/featurestore/redisstore"
	"github.com/flagplane/flagplane/shared/webhook"
)

// countingListener counts the connections a store makes to it.
func countingListener(tb testing.TB) (port int, accepted *atomic.Int32) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

func TestStoresRefuseAtDialTimeANameThatResolvesToARefusedAddress(t *testing.T) {
	// A host that passed the check at creation may resolve elsewhere later
	// (DNS rebinding): "localhost" stands for such a name here.
	guard := webhook.Guard{}
	t.Run("a Redis host is not connected to", func(t *testing.T) {
		port, accepted := countingListener(t)
		_, err := redisstore.Open(context.Background(), featurestore.Settings{Host: "localhost", Port: port}, guard.DialControl)
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("open: %v, want the guard's refusal", err)
		}
		if accepted.Load() != 0 {
			t.Fatal("the listener was reached")
		}
	})
	t.Run("a DynamoDB endpoint is not connected to, and the probe fails at connect", func(t *testing.T) {
		port, accepted := countingListener(t)
		st, err := dynamostore.Open(context.Background(), featurestore.Settings{TableName: "flags", Region: "us-east-1",
			Endpoint: "http://localhost:" + strconv.Itoa(port), AccessKeyID: "AKIA", SecretAccessKey: "secret"}, guard.DialControl)
		if err != nil {
			t.Fatal(err)
		}
		err = st.Probe(context.Background())
		var se *featurestore.StepError
		if !errors.As(err, &se) || se.Step != featurestore.StepConnect || !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("probe: %v, want a connect step refused by the guard", err)
		}
		if accepted.Load() != 0 {
			t.Fatal("the listener was reached")
		}
	})
}
