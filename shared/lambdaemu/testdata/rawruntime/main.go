// Command rawruntime is a fake bootstrap for the harness's tests. It speaks
// the Runtime API with plain HTTP, so it can misbehave in ways a real
// runtime library never would. FAKE_INIT chooses the start-up: "" (fine),
// "error" (POST /runtime/init/error, then exit 1), "exit" (exit 3 before
// asking for an invocation) or "hang" (never ask). Each event is a JSON
// object whose "action" chooses the answer; see handle.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

var base = "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime"

type event struct {
	Action string `json:"action"`
	Ms     int    `json:"ms"`
	Size   int    `json:"size"`
}

func main() {
	switch os.Getenv("FAKE_INIT") {
	case "error":
		post(base+"/init/error", "application/json", `{"errorMessage":"missing configuration","errorType":"Fake.InitError"}`, nil)
		os.Exit(1)
	case "exit":
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	}
	for {
		res, err := http.Get(base + "/invocation/next")
		if err != nil {
			fmt.Fprintln(os.Stderr, "next:", err)
			os.Exit(1)
		}
		payload, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			fmt.Fprintln(os.Stderr, "next: status", res.StatusCode)
			os.Exit(1)
		}
		handle(res.Header, payload)
	}
}

func handle(h http.Header, payload []byte) {
	id := h.Get("Lambda-Runtime-Aws-Request-Id")
	respond := func(v any) {
		body, _ := json.Marshal(v)
		post(base+"/invocation/"+id+"/response", "application/json", string(body), nil)
	}
	var ev event
	_ = json.Unmarshal(payload, &ev)
	switch ev.Action {
	case "echo":
		post(base+"/invocation/"+id+"/response", "application/json", string(payload), nil)
	case "headers":
		respond(map[string]string{
			"requestId": id, "deadlineMs": h.Get("Lambda-Runtime-Deadline-Ms"),
			"functionArn": h.Get("Lambda-Runtime-Invoked-Function-Arn"), "traceId": h.Get("Lambda-Runtime-Trace-Id"),
		})
	case "env":
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		wd, _ := os.Getwd()
		respond(map[string]any{"env": env, "cwd": wd})
	case "pid":
		respond(map[string]int{"pid": os.Getpid()})
	case "log":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		respond(map[string]int{"pid": os.Getpid()})
	case "crash":
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(2)
	case "sleep":
		fmt.Println("sleeping", ev.Ms)
		time.Sleep(time.Duration(ev.Ms) * time.Millisecond)
		respond(map[string]int{"pid": os.Getpid()})
	case "error":
		post(base+"/invocation/"+id+"/error", "application/json", `{"errorMessage":"boom","errorType":"Fake.Error"}`,
			map[string]string{"Lambda-Runtime-Function-Error-Type": "Unhandled"})
	case "trailer":
		// A response body that fails half way, reported in trailers as
		// aws-lambda-go does.
		req, _ := http.NewRequest(http.MethodPost, base+"/invocation/"+id+"/response", io.MultiReader(strings.NewReader(`{"partial":`)))
		req.ContentLength = -1
		req.Trailer = http.Header{
			"Lambda-Runtime-Function-Error-Type": {"Fake.StreamError"},
			"Lambda-Runtime-Function-Error-Body": {base64.StdEncoding.EncodeToString([]byte(`{"errorMessage":"stream broke","errorType":"Fake.StreamError"}`))},
		}
		do(req)
	case "big":
		post(base+"/invocation/"+id+"/response", "application/octet-stream", strings.Repeat("x", ev.Size), nil)
	case "noresponse":
		// Ask for the next invocation without answering this one.
	case "exitafter":
		respond(map[string]int{"pid": os.Getpid()})
		os.Exit(0)
	default:
		post(base+"/invocation/"+id+"/error", "application/json", `{"errorMessage":"unknown action","errorType":"Fake.BadEvent"}`, nil)
	}
}

func post(url, contentType, body string, headers map[string]string) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	do(req)
}

func do(req *http.Request) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, req.URL.Path+":", err)
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		fmt.Fprintln(os.Stderr, req.URL.Path+": status", res.StatusCode)
	}
}
