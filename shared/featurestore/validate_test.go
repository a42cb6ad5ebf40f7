package featurestore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// probeStore fails its probe as told.
type probeStore struct {
	*memStore
	err error
}

func (p probeStore) Probe(context.Context) error { return p.err }

func TestValidateNamesTheStepWithoutSayingWhatTheNetworkDid(t *testing.T) {
	dial := func(err error) error {
		return fmt.Errorf("connect to redis at 10.1.2.3:6379: %w", &net.OpError{Op: "dial", Net: "tcp", Err: err})
	}
	for _, tc := range []struct {
		name     string
		openErr  error
		probeErr error
		want     string
	}{
		{"a refused connection is a failed connect", dial(syscall.ECONNREFUSED), nil, "connect: the store could not be reached"},
		{"a connection timing out is the same failed connect", dial(os.ErrDeadlineExceeded), nil, "connect: the store could not be reached"},
		{"a name that does not resolve is the same failed connect", &net.DNSError{Err: "no such host", Name: "redis.example.com"}, nil, "connect: the store could not be reached"},
		{"a refused write names the write", nil, &StepError{Step: StepWrite, Err: errors.New("NOAUTH Authentication required")}, "write: the store did not accept the probe write"},
		{"a failed read back names the read", nil, &StepError{Step: StepRead, Err: errors.New("i/o timeout")}, "read: the probe could not be read back"},
		{"a failed removal names the delete", nil, &StepError{Step: StepDelete, Err: errors.New("READONLY")}, "delete: the probe could not be removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := func(context.Context, string, Settings) (Store, error) {
				if tc.openErr != nil {
					return nil, tc.openErr
				}
				return probeStore{memStore: newMemStore(), err: tc.probeErr}, nil
			}
			s := &Service{open: open, logger: discardLogger(), now: timeNow}
			v := s.Validate(context.Background(), &Config{ID: "c", IntegrationKey: Redis, Config: map[string]any{}})
			if v.StatusCode != 503 || v.Error != tc.want {
				t.Fatalf("got %d %q, want 503 %q", v.StatusCode, v.Error, tc.want)
			}
			step, _, _ := strings.Cut(tc.want, ":")
			if v.ResponseBody != `{"ok":false,"step":"`+step+`"}` {
				t.Fatalf("response body %s", v.ResponseBody)
			}
		})
	}
	t.Run("a probe that goes through is a 200", func(t *testing.T) {
		open := func(context.Context, string, Settings) (Store, error) {
			return probeStore{memStore: newMemStore()}, nil
		}
		s := &Service{open: open, logger: discardLogger(), now: timeNow}
		if v := s.Validate(context.Background(), &Config{ID: "c", IntegrationKey: Redis}); v.StatusCode != 200 || v.Error != "" {
			t.Fatalf("got %+v", v)
		}
	})
}
