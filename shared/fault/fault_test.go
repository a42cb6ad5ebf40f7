package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func TestCodeAndMessage(t *testing.T) {
	cause := errors.New("condition failed on PROJ#p")
	cases := []struct {
		name    string
		err     error
		code    fault.Code
		message string
	}{
		{"a fault carries its code and message", fault.New(fault.NotFound, "flag %q not found", "f"), fault.NotFound, `flag "f" not found`},
		{"a wrapped cause stays out of the client's message", fault.Wrap(cause, fault.Conflict, "changed meanwhile"), fault.Conflict, "changed meanwhile"},
		{"a fault wrapped by fmt keeps its code", fmt.Errorf("load flag: %w", fault.New(fault.Forbidden, "no")), fault.Forbidden, "no"},
		{"the outermost fault decides", fault.Wrap(fault.New(fault.NotFound, "inner"), fault.Invalid, "outer"), fault.Invalid, "outer"},
		{"a plain error is internal, and its text is not shown", cause, fault.Internal, "an internal error occurred"},
		{"an internal fault's message is not shown either", fault.New(fault.Internal, "stack trace here"), fault.Internal, "an internal error occurred"},
		{"nil is internal", nil, fault.Internal, "an internal error occurred"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code, msg := fault.CodeOf(c.err), fault.MessageOf(c.err); code != c.code || msg != c.message {
				t.Errorf("code %s, message %q; want %s, %q", code, msg, c.code, c.message)
			}
			if !fault.Is(c.err, c.code) {
				t.Errorf("Is(%v, %s) is false", c.err, c.code)
			}
		})
	}
	t.Run("the log text keeps the cause, and errors.Is finds it", func(t *testing.T) {
		err := fault.Wrap(cause, fault.Conflict, "changed meanwhile")
		if err.Error() != "conflict: changed meanwhile: condition failed on PROJ#p" || !errors.Is(err, cause) {
			t.Errorf("Error() = %q, errors.Is = %v", err.Error(), errors.Is(err, cause))
		}
	})
}
