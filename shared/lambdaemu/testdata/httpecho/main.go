// Command httpecho is a fake bootstrap for the front's tests, built like the
// real functions (aws-lambda-go with -tags lambda.norpc and the API Gateway
// v2 adapter). It answers every request with what it received, except:
//
//	/binary        bytes 0..255 as application/octet-stream
//	/cookies       two Set-Cookie headers and a header with two values
//	/status/{code} an empty answer with that status
//	/panic         a panic (a function error)
package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		w.Write(b)
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
		http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		panic("on purpose")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var cookies []string
		for _, c := range r.Cookies() {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		gw, _ := core.GetAPIGatewayV2ContextFromContext(r.Context())
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "path": r.URL.Path, "rawPath": r.URL.EscapedPath(), "rawQuery": r.URL.RawQuery,
			"query": r.URL.Query(), "header": r.Header, "cookies": cookies, "body": body, "remoteAddr": r.RemoteAddr,
			"routeKey": gw.RouteKey, "requestId": gw.RequestID, "stage": gw.Stage, "sourceIp": gw.HTTP.SourceIP,
		})
	})
	lambda.Start(httpadapter.NewV2(mux).ProxyWithContext)
}
