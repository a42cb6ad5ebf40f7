package lambdaemu

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
)

// invocation is one event on its way through an execution environment.
type invocation struct {
	id      string
	payload []byte
	timeout time.Duration

	// deadline is set by the /next call that hands the invocation over,
	// before handed is closed.
	deadline time.Time
	seq      int // the instance's count of /next calls when it was handed over
	handed   chan struct{}

	once sync.Once
	done chan result // receives the first result only
}

type result struct {
	payload []byte
	err     error
}

func newInvocation(payload []byte, timeout time.Duration) *invocation {
	return &invocation{
		id:      uuid.NewString(),
		payload: payload,
		timeout: timeout,
		handed:  make(chan struct{}),
		done:    make(chan result, 1),
	}
}

// finish records the invocation's result; later results are ignored.
func (inv *invocation) finish(r result) {
	inv.once.Do(func() { inv.done <- r })
}

// instance is one execution environment: a bootstrap process and the
// Runtime API server it talks to.
type instance struct {
	fn *Function
	n  int

	srv       *http.Server
	startedAt time.Time
	stdout    *prefixWriter
	stderr    *prefixWriter

	queue   chan *invocation // at most one: the pool hands an instance to one caller
	exited  chan struct{}    // closed once the process has exited
	exitErr error            // set before exited is closed
	closing chan struct{}    // closed by stop
	stopped sync.Once

	invocations int // counted by the caller that holds the instance

	mu       sync.Mutex
	cmd      *exec.Cmd     // set once the process has started
	stopping bool          // no process may start any more
	nexts    int           // /next calls so far
	nextCh   chan struct{} // closed and replaced at every /next call
	initAt   time.Time     // the first /next call
	current  *invocation   // handed over, not answered yet
	initErr  *FunctionError
	killedBy string // why the harness killed the process, for the error
}

func newInstance(f *Function, n int) *instance {
	return &instance{
		fn:      f,
		n:       n,
		queue:   make(chan *invocation, 1),
		exited:  make(chan struct{}),
		closing: make(chan struct{}),
		nextCh:  make(chan struct{}),
	}
}

// start opens the Runtime API on a free loopback port and starts the
// process. Whatever happens, exited is closed once no process runs, so
// stop never waits forever.
func (i *instance) start() error {
	fail := func(err error) error {
		close(i.exited)
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(fmt.Errorf("lambdaemu: function %s: runtime API listener: %w", i.fn.cfg.Name, err))
	}
	i.srv = &http.Server{Handler: i.runtimeAPI(), ReadHeaderTimeout: 10 * time.Second}

	prefix := fmt.Sprintf("[%s#%d] ", i.fn.cfg.Name, i.n)
	i.stdout = &prefixWriter{prefix: prefix, w: i.fn.out}
	i.stderr = &prefixWriter{prefix: prefix, w: i.fn.out}
	var b [16]byte
	_, _ = rand.Read(b[:])
	stream := i.fn.stamp + "/[$LATEST]" + hex.EncodeToString(b[:])

	cmd := exec.Command(i.fn.cfg.Bootstrap)
	cmd.Dir = filepath.Dir(i.fn.cfg.Bootstrap)
	cmd.Env = i.fn.environ(ln.Addr().String(), stream)
	cmd.Stdout, cmd.Stderr = i.stdout, i.stderr
	cmd.WaitDelay = 2 * time.Second
	dieWithParent(cmd)

	i.mu.Lock()
	if i.stopping { // the function was closed meanwhile
		i.mu.Unlock()
		_ = ln.Close()
		return fail(ErrClosed)
	}
	i.startedAt = time.Now()
	err = cmd.Start()
	if err == nil {
		i.cmd = cmd
	}
	i.mu.Unlock()
	if err != nil {
		_ = ln.Close()
		return fail(&FunctionError{Type: TypeInvalidEntry, Message: fmt.Sprintf("function %s: start %s: %v", i.fn.cfg.Name, i.fn.cfg.Bootstrap, err)})
	}
	// Serve only now, so the handlers see every field set above; the
	// runtime's first connection waits in the listener's backlog meanwhile.
	go func() { _ = i.srv.Serve(ln) }()
	go func() {
		i.exitErr = cmd.Wait()
		i.fn.notePeakRSS(peakRSS(cmd.ProcessState))
		i.stdout.Flush()
		i.stderr.Flush()
		close(i.exited)
		_ = i.srv.Close()
	}()
	return nil
}

// stop kills the process if it runs, waits for its exit and closes the
// Runtime API. It may run before, during or after start.
func (i *instance) stop() {
	i.stopped.Do(func() {
		close(i.closing)
		i.kill("")
	})
}

// kill stops the process (reason, when not empty, is named by later
// errors) and waits until it has exited.
func (i *instance) kill(reason string) {
	i.mu.Lock()
	i.stopping = true
	if i.killedBy == "" {
		i.killedBy = reason
	}
	cmd := i.cmd
	i.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
	}
	<-i.exited
}

func (i *instance) initDuration() (time.Duration, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.initAt.IsZero() {
		return 0, false
	}
	return i.initAt.Sub(i.startedAt), true
}

func (i *instance) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(i.stderr, format+"\n", args...)
}

// run delivers inv to the runtime and waits for its result, enforcing the
// init and function timeouts; it is called by the instance's holder only.
func (i *instance) run(inv *invocation) result {
	i.invocations++
	i.queue <- inv
	i.mu.Lock()
	ready := !i.initAt.IsZero()
	i.mu.Unlock()
	// Until the runtime takes the invocation: the init phase on a cold
	// start, or the function timeout when the runtime is late to ask.
	limit, phase := inv.timeout, "waiting for the runtime to ask for the invocation"
	if !ready {
		limit, phase = time.Until(i.startedAt.Add(i.fn.cfg.InitTimeout)), "INIT phase"
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-inv.handed:
	case <-i.exited:
		select {
		case <-inv.handed: // taken just before the exit: report the exit below
		default:
			return result{err: i.exitError(inv)}
		}
	case <-timer.C:
		i.kill("timeout")
		return result{err: &FunctionError{Type: TypeTimeout, Message: fmt.Sprintf("RequestId: %s Error: %s timed out after %.2f seconds", inv.id, phase, limit.Seconds())}}
	}
	timer.Reset(time.Until(inv.deadline))
	select {
	case r := <-inv.done:
		return r
	case <-i.exited:
		select {
		case r := <-inv.done:
			return r
		default:
			return result{err: i.exitError(inv)}
		}
	case <-timer.C:
		select {
		case r := <-inv.done:
			return r
		default:
		}
		i.logf("%s Task timed out after %.2f seconds", time.Now().UTC().Format(time.RFC3339Nano), inv.timeout.Seconds())
		i.kill("timeout")
		return result{err: &FunctionError{Type: TypeTimeout, Message: fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", inv.id, inv.timeout.Seconds())}}
	}
}

// exitError describes the process's exit during inv.
func (i *instance) exitError(inv *invocation) error {
	if i.fn.isClosed() {
		return ErrClosed
	}
	i.mu.Lock()
	initErr, killedBy := i.initErr, i.killedBy
	i.mu.Unlock()
	if initErr != nil {
		return initErr
	}
	msg := fmt.Sprintf("RequestId: %s Error: Runtime exited with error: %v", inv.id, i.exitErr)
	if i.exitErr == nil {
		msg = fmt.Sprintf("RequestId: %s Error: Runtime exited without providing a reason", inv.id)
	}
	if killedBy != "" {
		msg += " (killed: " + killedBy + ")"
	}
	i.logf("%s", msg)
	return &FunctionError{Type: TypeExit, Message: msg}
}

// awaitNext waits until the runtime asks for the invocation after inv,
// bounded by inv's deadline, and reports whether the instance can take
// another one. A runtime that neither asks nor exits in time is killed.
func (i *instance) awaitNext(inv *invocation) bool {
	select {
	case <-inv.handed:
	default:
		return false // never taken: the process is gone
	}
	timer := time.NewTimer(time.Until(inv.deadline))
	defer timer.Stop()
	for {
		i.mu.Lock()
		if i.nexts > inv.seq {
			i.mu.Unlock()
			return true
		}
		wait := i.nextCh
		i.mu.Unlock()
		select {
		case <-wait:
		case <-i.exited:
			return false
		case <-i.closing:
			return false
		case <-timer.C:
			i.logf("the runtime did not ask for the next invocation before the deadline of %s", inv.id)
			i.kill("no /next call before the deadline")
			return false
		}
	}
}
