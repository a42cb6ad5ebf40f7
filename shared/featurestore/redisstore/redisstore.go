// Package redisstore writes flag data to Redis in the layout of
// LaunchDarkly's Redis SDK integration (go-server-sdk-redis-redigo): a hash
// "<prefix>:features" (and "<prefix>:segments") of key -> item JSON, the
// key "<prefix>:$inited", and "<prefix>:big_segments_synchronized_on".
package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	r "github.com/gomodule/redigo/redis"

	"github.com/flagplane/flagplane/shared/featurestore"
)

// Timeout bounds connecting and each command.
const Timeout = 5 * time.Second

// maxRetries bounds the WATCH retries of one write under contention.
const maxRetries = 20

// Store is one Redis connection.
type Store struct {
	conn   r.Conn
	prefix string
}

// Open connects (TLS when asked, AUTH with the username and password,
// SELECT the database); control, when set, vets the address dialled (the
// SSRF guard).
func Open(ctx context.Context, s featurestore.Settings, control func(network, address string, c syscall.RawConn) error) (*Store, error) {
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	dialer := &net.Dialer{Timeout: Timeout, Control: control}
	opts := []r.DialOption{
		r.DialContextFunc(func(ctx context.Context, network, address string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, address)
		}),
		r.DialReadTimeout(Timeout), r.DialWriteTimeout(Timeout), r.DialConnectTimeout(Timeout),
		r.DialDatabase(s.Database),
	}
	if s.Username != "" {
		opts = append(opts, r.DialUsername(s.Username))
	}
	if s.Password != "" {
		opts = append(opts, r.DialPassword(s.Password))
	}
	if s.TLS {
		opts = append(opts, r.DialUseTLS(true), r.DialTLSConfig(&tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}))
	}
	conn, err := r.DialContext(ctx, "tcp", addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to redis at %s: %w", addr, err)
	}
	return &Store{conn: conn, prefix: s.Prefix}, nil
}

func (st *Store) key(name string) string { return st.prefix + ":" + name }

// Close closes the connection.
func (st *Store) Close() error { return st.conn.Close() }

func version(itemJSON []byte) (int, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(itemJSON, &v); err != nil {
		return 0, fmt.Errorf("stored item is not JSON: %w", err)
	}
	return v.Version, nil
}

// Items reads the hash of kind.
func (st *Store) Items(_ context.Context, kind string) (map[string]featurestore.Item, error) {
	all, err := r.StringMap(st.conn.Do("HGETALL", st.key(kind)))
	if err != nil {
		return nil, err
	}
	out := make(map[string]featurestore.Item, len(all))
	for k, v := range all {
		ver, err := version([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", kind, k, err)
		}
		out[k] = featurestore.Item{Version: ver, JSON: []byte(v)}
	}
	return out, nil
}

// Put writes under WATCH as the SDK's own upsert does; see featurestore.Store.
func (st *Store) Put(ctx context.Context, kind, key string, it featurestore.Item, expect int) (bool, error) {
	return st.change(ctx, kind, key, func(stored int, exists bool) bool {
		if expect < 0 {
			return !exists || stored < it.Version
		}
		return exists && stored == expect
	}, "HSET", it.JSON)
}

// Delete removes the item when its version is expect.
func (st *Store) Delete(ctx context.Context, kind, key string, expect int) (bool, error) {
	return st.change(ctx, kind, key, func(stored int, exists bool) bool { return exists && stored == expect }, "HDEL", nil)
}

// change runs cmd on the hash field when ok holds for the stored item,
// retrying when another client changed the hash between the read and the
// write (EXEC answers nil).
func (st *Store) change(ctx context.Context, kind, key string, ok func(stored int, exists bool) bool, cmd string, value []byte) (bool, error) {
	hash := st.key(kind)
	for range maxRetries {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if _, err := st.conn.Do("WATCH", hash); err != nil {
			return false, err
		}
		raw, err := r.Bytes(st.conn.Do("HGET", hash, key))
		exists := err == nil
		if err != nil && !errors.Is(err, r.ErrNil) {
			_, _ = st.conn.Do("UNWATCH")
			return false, err
		}
		stored := 0
		if exists {
			if stored, err = version(raw); err != nil {
				_, _ = st.conn.Do("UNWATCH")
				return false, err
			}
		}
		if !ok(stored, exists) {
			_, err := st.conn.Do("UNWATCH")
			return false, err
		}
		_ = st.conn.Send("MULTI")
		if cmd == "HSET" {
			_ = st.conn.Send("HSET", hash, key, value)
		} else {
			_ = st.conn.Send("HDEL", hash, key)
		}
		res, err := st.conn.Do("EXEC")
		if err != nil {
			return false, err
		}
		if res != nil {
			return true, nil
		}
	}
	return false, fmt.Errorf("%s %q changed by another client %d times in a row", kind, key, maxRetries)
}

// MarkInitialized sets "<prefix>:$inited".
func (st *Store) MarkInitialized(context.Context) error {
	_, err := st.conn.Do("SET", st.key("$inited"), "")
	return err
}

// SetSynchronizedOn sets "<prefix>:big_segments_synchronized_on".
func (st *Store) SetSynchronizedOn(_ context.Context, ms int64) error {
	_, err := st.conn.Do("SET", st.key("big_segments_synchronized_on"), strconv.FormatInt(ms, 10))
	return err
}

// SynchronizedOn reads it.
func (st *Store) SynchronizedOn(context.Context) (int64, error) {
	s, err := r.String(st.conn.Do("GET", st.key("big_segments_synchronized_on")))
	if errors.Is(err, r.ErrNil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// pipeline is how many commands WriteMembers sends before reading replies.
const pipeline = 1000

// WriteMembers adds ref to, or removes it from, the sets
// "<prefix>:big_segment_include:<hash>" (or ..._exclude:) of the keys,
// pipelined.
func (st *Store) WriteMembers(ctx context.Context, ref string, included, on bool, contextKeys []string) error {
	set, cmd := st.key("big_segment_exclude:"), "SREM"
	if included {
		set = st.key("big_segment_include:")
	}
	if on {
		cmd = "SADD"
	}
	for len(contextKeys) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(contextKeys), pipeline)
		for _, k := range contextKeys[:n] {
			if err := st.conn.Send(cmd, set+featurestore.HashContextKey(k), ref); err != nil {
				return err
			}
		}
		if err := st.conn.Flush(); err != nil {
			return err
		}
		var first error
		for range n {
			if _, err := st.conn.Receive(); err != nil && first == nil {
				first = err
			}
		}
		if first != nil {
			return fmt.Errorf("%s %s: %w", cmd, ref, first)
		}
		contextKeys = contextKeys[n:]
	}
	return nil
}

// Probe writes "<prefix>:$flagplane_probe" (expiring in a minute), reads
// it back and deletes it.
func (st *Store) Probe(context.Context) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	want := hex.EncodeToString(b[:])
	k := st.key("$flagplane_probe")
	if _, err := st.conn.Do("SET", k, want, "PX", 60000); err != nil {
		return &featurestore.StepError{Step: featurestore.StepWrite, Err: fmt.Errorf("write %s: %w", k, err)}
	}
	got, err := r.String(st.conn.Do("GET", k))
	if err != nil {
		return &featurestore.StepError{Step: featurestore.StepRead, Err: fmt.Errorf("read back %s: %w", k, err)}
	}
	if got != want {
		return &featurestore.StepError{Step: featurestore.StepRead, Err: fmt.Errorf("read back %s: got another value than written", k)}
	}
	if _, err := st.conn.Do("DEL", k); err != nil {
		return &featurestore.StepError{Step: featurestore.StepDelete, Err: fmt.Errorf("remove %s: %w", k, err)}
	}
	return nil
}

var _ featurestore.Store = (*Store)(nil)
