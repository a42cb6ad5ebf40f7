package lambdaemu

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// The Runtime API, version 2018-06-01, as one execution environment serves
// it to its runtime: https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html
const (
	headerRequestID   = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline    = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID     = "Lambda-Runtime-Trace-Id"
	headerErrorType   = "Lambda-Runtime-Function-Error-Type"
	// Trailers a streaming runtime (aws-lambda-go) sends when producing the
	// response body fails half way.
	trailerErrorType = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody = "Lambda-Runtime-Function-Error-Body"
)

func (i *instance) runtimeAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", i.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", i.response)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", i.invocationError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", i.initError)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeRuntimeStatus(w, http.StatusNotFound, "UnknownEndpoint", fmt.Sprintf("the harness does not serve %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// next blocks until an invocation is queued and hands it to the runtime.
// Calling it also completes the previous invocation, as in Lambda; one
// still unanswered fails with Runtime.NoResponse.
func (i *instance) next(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	first := i.initAt.IsZero()
	if first {
		i.initAt = time.Now()
	}
	i.nexts++
	seq := i.nexts
	close(i.nextCh)
	i.nextCh = make(chan struct{})
	abandoned := i.current
	i.current = nil
	initAt := i.initAt
	i.mu.Unlock()

	if first {
		i.logf("INIT_REPORT Init Duration: %.2f ms", float64(initAt.Sub(i.startedAt).Microseconds())/1000)
	}
	if abandoned != nil {
		abandoned.finish(result{err: &FunctionError{Type: TypeNoResponse,
			Message: fmt.Sprintf("RequestId: %s Error: the runtime asked for the next invocation without answering this one", abandoned.id)}})
	}
	select {
	case inv := <-i.queue:
		inv.deadline = time.Now().Add(inv.timeout)
		inv.seq = seq
		i.mu.Lock()
		i.current = inv
		i.mu.Unlock()
		h := w.Header()
		h.Set(headerRequestID, inv.id)
		h.Set(headerDeadline, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set(headerFunctionARN, i.fn.arn)
		h.Set(headerTraceID, traceID())
		h.Set("Content-Type", "application/json")
		close(inv.handed)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.payload)
	case <-i.closing:
		writeRuntimeStatus(w, http.StatusInternalServerError, "ShuttingDown", "the execution environment is shutting down")
	case <-r.Context().Done():
	}
}

// take removes and returns the invocation in flight with id.
func (i *instance) take(id string) (*invocation, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.current == nil || i.current.id != id {
		return nil, fmt.Errorf("no invocation %q is in flight", id)
	}
	inv := i.current
	i.current = nil
	return inv, nil
}

// response takes the invocation's result.
func (i *instance) response(w http.ResponseWriter, r *http.Request) {
	inv, err := i.take(r.PathValue("id"))
	if err != nil {
		writeRuntimeStatus(w, http.StatusBadRequest, "InvalidRequestID", err.Error())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPayload+1))
	if err != nil {
		inv.finish(result{err: &FunctionError{Type: TypeNoResponse, Message: fmt.Sprintf("RequestId: %s Error: reading the response: %v", inv.id, err)}})
		writeRuntimeStatus(w, http.StatusBadRequest, "InvalidResponse", err.Error())
		return
	}
	if len(body) > MaxPayload {
		msg := fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxPayload)
		inv.finish(result{err: &FunctionError{Type: TypeResponseTooLarge, Message: msg}})
		writeRuntimeStatus(w, http.StatusRequestEntityTooLarge, TypeResponseTooLarge, msg)
		return
	}
	// Trailers are read once the body has been read to its end.
	if typ := r.Trailer.Get(trailerErrorType); typ != "" {
		raw, _ := base64.StdEncoding.DecodeString(r.Trailer.Get(trailerErrorBody))
		inv.finish(result{err: functionError(raw, typ)})
	} else {
		inv.finish(result{payload: body})
	}
	writeRuntimeStatus(w, http.StatusAccepted, "", "")
}

// invocationError takes an error the runtime reports for an invocation.
func (i *instance) invocationError(w http.ResponseWriter, r *http.Request) {
	inv, err := i.take(r.PathValue("id"))
	if err != nil {
		writeRuntimeStatus(w, http.StatusBadRequest, "InvalidRequestID", err.Error())
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxPayload))
	inv.finish(result{err: functionError(body, r.Header.Get(headerErrorType))})
	writeRuntimeStatus(w, http.StatusAccepted, "", "")
}

// initError takes a failed initialization; the environment is then torn
// down and the invocation that started it fails with this error.
func (i *instance) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxPayload))
	fe := functionError(body, r.Header.Get(headerErrorType))
	i.mu.Lock()
	late := !i.initAt.IsZero()
	if !late {
		i.initErr = fe
	}
	i.mu.Unlock()
	if late {
		writeRuntimeStatus(w, http.StatusForbidden, "InvalidStateTransition", "init/error after the first /next call")
		return
	}
	i.logf("INIT_ERROR %s: %s", fe.Type, fe.Message)
	writeRuntimeStatus(w, http.StatusAccepted, "", "")
	go i.kill("init error")
}

// functionError reads an error document {"errorMessage", "errorType", ...}.
func functionError(body []byte, headerType string) *FunctionError {
	var doc struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}
	_ = json.Unmarshal(body, &doc)
	fe := &FunctionError{Type: doc.Type, Message: doc.Message}
	if len(body) > 0 {
		fe.Payload = body
	}
	if fe.Type == "" {
		fe.Type = headerType
	}
	if fe.Type == "" {
		fe.Type = "Unhandled"
	}
	if fe.Message == "" && len(body) > 0 && doc.Type == "" {
		fe.Message = string(body)
	}
	return fe
}

// writeRuntimeStatus answers a runtime: 202 {"status":"OK"} or an error document.
func writeRuntimeStatus(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusAccepted {
		_, _ = io.WriteString(w, `{"status":"OK"}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"errorMessage": msg, "errorType": typ})
}

// traceID makes an X-Ray trace header as Lambda passes it on.
func traceID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}
