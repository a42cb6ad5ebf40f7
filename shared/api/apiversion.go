package api

import (
	"net/http"
	"strings"
)

// datedWriter marks the answer to a request whose LD-API-Version names a
// dated version of LaunchDarkly's API (LaunchDarkly's Terraform provider
// sends 20240415 on every request): WriteJSON writes its timestamps with
// LaunchDarkly's types. See jsondoc.MillisString for which fields change.
type datedWriter struct{ http.ResponseWriter }

func (w datedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withAPIVersion marks the answers of requests that name a dated version.
func withAPIVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if NamesDatedVersion(r.Header) {
			w = datedWriter{w}
		}
		next.ServeHTTP(w, r)
	})
}

// NamesDatedVersion reports whether LD-API-Version holds a dated version:
// eight digits, as 20240415. "beta" alone is not one. The test harness
// asks it too, to check such answers in their dated form.
func NamesDatedVersion(h http.Header) bool {
	for _, v := range h.Values(LDVersionHeader) {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if len(part) == 8 && strings.Trim(part, "0123456789") == "" {
				return true
			}
		}
	}
	return false
}

// answersDated reports whether w, or a writer it wraps, is a datedWriter.
func answersDated(w http.ResponseWriter) bool {
	for {
		switch x := w.(type) {
		case datedWriter:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return false
		}
	}
}
