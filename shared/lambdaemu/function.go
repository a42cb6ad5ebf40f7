package lambdaemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Limits of AWS Lambda that the harness enforces.
const (
	// MaxPayload is the largest synchronous invocation request, and the
	// largest response, Lambda accepts (6 MB).
	MaxPayload = 6 * 1024 * 1024
	// DefaultTimeout is Lambda's default function timeout.
	DefaultTimeout = 3 * time.Second
	// DefaultInitTimeout is Lambda's limit on the init phase of an on-demand
	// execution environment.
	DefaultInitTimeout = 10 * time.Second
)

// Error types the harness reports itself, as Lambda names them.
const (
	TypeTimeout          = "Sandbox.Timedout"
	TypeExit             = "Runtime.ExitError"
	TypeNoResponse       = "Runtime.NoResponse"
	TypeInvalidEntry     = "Runtime.InvalidEntrypoint"
	TypeResponseTooLarge = "Function.ResponseSizeTooLarge"
)

var (
	// ErrClosed is returned by Invoke once the function is closed.
	ErrClosed = errors.New("lambdaemu: function is closed")
	// ErrPayloadTooLarge is returned by Invoke for a payload over MaxPayload;
	// Lambda refuses such an invocation before running anything.
	ErrPayloadTooLarge = fmt.Errorf("lambdaemu: invocation payload larger than %d bytes", MaxPayload)
)

// FunctionError is an invocation that failed inside the function: an error
// the runtime reported, a crash, a timeout or a failed init.
type FunctionError struct {
	// Type is the errorType: the runtime's (e.g. "errorString") or one of
	// the Type constants for failures the harness observed.
	Type string
	// Message is the errorMessage.
	Message string
	// Payload is the error document as the runtime posted it; nil when the
	// harness made the error up (crash, timeout).
	Payload []byte
}

func (e *FunctionError) Error() string { return "function error " + e.Type + ": " + e.Message }

// IsTimeout reports whether err is an invocation (or init) that timed out.
func IsTimeout(err error) bool {
	var fe *FunctionError
	return errors.As(err, &fe) && fe.Type == TypeTimeout
}

// Credentials are the credentials Lambda hands a function (from its role).
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// Config describes one function.
type Config struct {
	// Name is the function name (AWS_LAMBDA_FUNCTION_NAME, the ARN).
	Name string
	// Bootstrap is the path of the executable, run as Lambda runs the
	// bootstrap of a provided.al2023 function; its directory is the task root.
	Bootstrap string
	// Env is the function's environment, exactly as the deployment sets it.
	// Names Lambda reserves (AWS_REGION, AWS_LAMBDA_*, ...) are refused, as
	// Lambda refuses them.
	Env map[string]string
	// HostEnv is added last and stands in for what the AWS account provides
	// outside the function's configuration, e.g. AWS_ENDPOINT_URL_DYNAMODB
	// pointing at an emulator. Reserved names are refused here too.
	HostEnv map[string]string
	// Credentials become AWS_ACCESS_KEY_ID and friends; dummy ones when empty.
	Credentials Credentials
	// Region is AWS_REGION and AWS_DEFAULT_REGION (default us-east-1).
	Region string
	// AccountID goes into the function ARN (default 000000000000).
	AccountID string
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE (default 128); it is not enforced.
	MemoryMB int
	// Timeout is the function timeout (default 3 s).
	Timeout time.Duration
	// InitTimeout bounds start-up until the first /next call (default 10 s).
	InitTimeout time.Duration
	// MaxInstances is how many execution environments may run at once
	// (default 4). An invocation waits for a free one beyond that; Lambda
	// would throttle instead.
	MaxInstances int
	// Output receives the processes' stdout and stderr and the harness's
	// own INIT_REPORT, timeout and crash lines, each line prefixed with the
	// function name and instance number. Nil discards them.
	Output io.Writer
}

// ColdStart is the start-up of one execution environment.
type ColdStart struct {
	// Instance numbers the environments of a function from 1.
	Instance int
	// Init is process start to the first /next call: Lambda's Init Duration.
	Init time.Duration
	// FirstResponse is process start to the first invocation's result.
	FirstResponse time.Duration
}

// Stats are what a function has measured since it was made (or last reset).
type Stats struct {
	ColdStarts []ColdStart
	// Invocations counts finished invocations; Errors those that failed
	// (function errors, crashes, timeouts), Timeouts those that timed out.
	Invocations, Errors, Timeouts int
	// Warm are the latencies of invocations that found a running
	// environment, Invoke call to result, in order.
	Warm []time.Duration
	// PeakRSS is the most memory (resident set, bytes) an execution
	// environment of the function used, among those that have exited; 0
	// where the system does not say.
	PeakRSS int64
}

// maxWarmSamples bounds the memory Stats.Warm takes in long runs.
const maxWarmSamples = 1 << 20

// Function is one Lambda function: a pool of execution environments of one
// bootstrap. It is safe for concurrent use.
type Function struct {
	cfg   Config
	arn   string
	out   *lockedWriter
	stamp string // of the log stream names

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced whenever the pool changes
	idle      []*instance   // ready for an invocation, most recent last
	live      map[*instance]bool
	finishing int // answered, waiting for the runtime to ask for the next
	started   int // instances ever started
	closed    bool
	stats     Stats
}

// New checks cfg and returns the function. Nothing runs until the first
// Invoke, as in Lambda; call Close to stop every process.
func New(cfg Config) (*Function, error) {
	if cfg.Name == "" {
		return nil, errors.New("lambdaemu: function name is empty")
	}
	path, err := filepath.Abs(cfg.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: function %s: bootstrap path: %w", cfg.Name, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: function %s: %w", cfg.Name, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("lambdaemu: function %s: %s is not an executable file", cfg.Name, path)
	}
	cfg.Bootstrap = path
	for _, env := range []map[string]string{cfg.Env, cfg.HostEnv} {
		if bad := reservedIn(env); len(bad) > 0 {
			return nil, fmt.Errorf("lambdaemu: function %s: Lambda reserves the environment variables %v", cfg.Name, bad)
		}
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.AccountID == "" {
		cfg.AccountID = "000000000000"
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = 128
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.InitTimeout <= 0 {
		cfg.InitTimeout = DefaultInitTimeout
	}
	if cfg.MaxInstances <= 0 {
		cfg.MaxInstances = 4
	}
	if cfg.Credentials.AccessKeyID == "" {
		cfg.Credentials = Credentials{AccessKeyID: "lambdaemu", SecretAccessKey: "lambdaemu"}
	}
	return &Function{
		cfg:     cfg,
		arn:     fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", cfg.Region, cfg.AccountID, cfg.Name),
		out:     &lockedWriter{w: cfg.Output},
		stamp:   time.Now().UTC().Format("2006/01/02"),
		changed: make(chan struct{}),
		live:    map[*instance]bool{},
	}, nil
}

// Name returns the function name.
func (f *Function) Name() string { return f.cfg.Name }

// ARN returns the function ARN the runtime is told it was invoked as.
func (f *Function) ARN() string { return f.arn }

// Invoke runs one invocation with payload and returns the function's
// response. A failure inside the function is a *FunctionError; ctx bounds
// only the wait (an abandoned invocation still runs to its end, as in
// Lambda, and its environment is reused afterwards).
func (f *Function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if len(payload) > MaxPayload {
		return nil, ErrPayloadTooLarge
	}
	began := time.Now()
	inst, err := f.acquire(ctx)
	if err != nil {
		return nil, err
	}
	cold := inst.invocations == 0
	inv := newInvocation(payload, f.cfg.Timeout)
	res := make(chan result, 1)
	go func() {
		r := inst.run(inv)
		f.record(inst, cold, began, r)
		res <- r
		f.release(inst, inv)
	}()
	select {
	case r := <-res:
		return r.payload, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("lambdaemu: invoke %s: %w", f.cfg.Name, context.Cause(ctx))
	}
}

// acquire returns an idle environment, or starts one when none is idle or
// about to become idle and the pool has room, or waits.
func (f *Function) acquire(ctx context.Context) (*instance, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		if n := len(f.idle); n > 0 {
			inst := f.idle[n-1]
			f.idle = f.idle[:n-1]
			f.mu.Unlock()
			return inst, nil
		}
		if f.finishing == 0 && len(f.live) < f.cfg.MaxInstances {
			f.started++
			inst := newInstance(f, f.started)
			f.live[inst] = true
			f.mu.Unlock()
			if err := inst.start(); err != nil {
				f.discard(inst)
				return nil, err
			}
			return inst, nil
		}
		wait := f.changed
		f.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("lambdaemu: invoke %s: no execution environment free: %w", f.cfg.Name, context.Cause(ctx))
		}
	}
}

// release returns inst to the pool once the runtime asks for the next
// invocation, which is when Lambda considers an invocation complete, or
// drops it when the process is gone.
func (f *Function) release(inst *instance, inv *invocation) {
	f.mu.Lock()
	f.finishing++
	f.mu.Unlock()
	ok := inst.awaitNext(inv)
	f.mu.Lock()
	f.finishing--
	if ok && !f.closed {
		f.idle = append(f.idle, inst)
		f.broadcast()
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	f.discard(inst)
}

// discard stops inst and removes it from the pool.
func (f *Function) discard(inst *instance) {
	inst.stop()
	f.mu.Lock()
	delete(f.live, inst)
	f.broadcast()
	f.mu.Unlock()
}

// broadcast wakes every acquire waiting for a change; f.mu must be held.
func (f *Function) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Function) record(inst *instance, cold bool, began time.Time, r result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Invocations++
	if r.err != nil {
		f.stats.Errors++
		if IsTimeout(r.err) {
			f.stats.Timeouts++
		}
	}
	if cold {
		if init, ok := inst.initDuration(); ok {
			f.stats.ColdStarts = append(f.stats.ColdStarts, ColdStart{Instance: inst.n, Init: init, FirstResponse: time.Since(inst.startedAt)})
		}
	} else if len(f.stats.Warm) < maxWarmSamples {
		f.stats.Warm = append(f.stats.Warm, time.Since(began))
	}
}

func (f *Function) notePeakRSS(n int64) {
	f.mu.Lock()
	f.stats.PeakRSS = max(f.stats.PeakRSS, n)
	f.mu.Unlock()
}

// Stats returns a copy of the measurements so far.
func (f *Function) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.ColdStarts = append([]ColdStart(nil), s.ColdStarts...)
	s.Warm = append([]time.Duration(nil), s.Warm...)
	return s
}

// ResetStats forgets the measurements so far.
func (f *Function) ResetStats() {
	f.mu.Lock()
	f.stats = Stats{}
	f.mu.Unlock()
}

// Close kills every process of the function and waits for them to exit.
// Invocations in flight fail. Close is idempotent.
func (f *Function) Close() error {
	f.mu.Lock()
	f.closed = true
	insts := make([]*instance, 0, len(f.live))
	for inst := range f.live {
		insts = append(insts, inst)
	}
	f.idle = nil
	f.broadcast()
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, inst := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.discard(inst)
		}()
	}
	wg.Wait()
	return nil
}

// isClosed reports whether Close was called.
func (f *Function) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// environ is the whole environment of a new process: what Lambda sets, then
// the function's, then the host's, with the Runtime API address.
func (f *Function) environ(runtimeAPI string, stream string) []string {
	c := f.cfg
	env := map[string]string{
		"_HANDLER":                        filepath.Base(c.Bootstrap),
		"AWS_REGION":                      c.Region,
		"AWS_DEFAULT_REGION":              c.Region,
		"AWS_LAMBDA_FUNCTION_NAME":        c.Name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(c.MemoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + c.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      stream,
		"AWS_LAMBDA_RUNTIME_API":          runtimeAPI,
		"AWS_ACCESS_KEY_ID":               c.Credentials.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":           c.Credentials.SecretAccessKey,
		"LAMBDA_TASK_ROOT":                filepath.Dir(c.Bootstrap),
		"LAMBDA_RUNTIME_DIR":              filepath.Dir(c.Bootstrap),
		"LANG":                            "en_US.UTF-8",
		"TZ":                              ":UTC",
		"PATH":                            "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
	}
	if c.Credentials.SessionToken != "" {
		env["AWS_SESSION_TOKEN"] = c.Credentials.SessionToken
	}
	for _, extra := range []map[string]string{c.Env, c.HostEnv} {
		for k, v := range extra {
			env[k] = v
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// reserved are the variables Lambda sets itself and refuses in a function's
// configuration.
var reserved = map[string]bool{
	"_HANDLER": true, "_X_AMZN_TRACE_ID": true, "AWS_DEFAULT_REGION": true, "AWS_REGION": true,
	"AWS_EXECUTION_ENV": true, "AWS_LAMBDA_FUNCTION_NAME": true, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": true,
	"AWS_LAMBDA_FUNCTION_VERSION": true, "AWS_LAMBDA_INITIALIZATION_TYPE": true, "AWS_LAMBDA_LOG_GROUP_NAME": true,
	"AWS_LAMBDA_LOG_STREAM_NAME": true, "AWS_ACCESS_KEY": true, "AWS_ACCESS_KEY_ID": true,
	"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "AWS_LAMBDA_RUNTIME_API": true,
	"LAMBDA_TASK_ROOT": true, "LAMBDA_RUNTIME_DIR": true,
}

func reservedIn(env map[string]string) []string {
	var bad []string
	for k := range env {
		if reserved[k] {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return bad
}
