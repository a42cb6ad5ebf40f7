// Package faulttest holds the checks tests make of faults: the code a
// failure carries and what its message names.
package faulttest

import (
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

// Want fails the test unless err carries code and its text holds part.
func Want(tb testing.TB, err error, code fault.Code, part string) {
	tb.Helper()
	if !fault.Is(err, code) || !strings.Contains(err.Error(), part) {
		tb.Fatalf("error %v, want %s naming %q", err, code, part)
	}
}

// OneWins fails the test unless exactly one of errs, the outcomes of
// writers that raced, is nil and every other carries code (the loser's 409).
func OneWins(tb testing.TB, errs []error, code fault.Code) {
	tb.Helper()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !fault.Is(err, code):
			tb.Errorf("a losing writer got %v, want %s", err, code)
		}
	}
	if won != 1 {
		tb.Fatalf("%d writers won (errors %v), want exactly one", won, errs)
	}
}
