// Package fault is the one error type of flagplane. Domain code returns a
// *fault.Error with a Code; the HTTP kit maps codes to statuses in one place.
package fault

import (
	"errors"
	"fmt"
)

// Code names a kind of failure; the values are the codes clients see.
type Code string

const (
	Invalid          Code = "invalid_request"
	Unauthorized     Code = "unauthorized"
	Forbidden        Code = "forbidden"
	NotFound         Code = "not_found"
	MethodNotAllowed Code = "method_not_allowed"
	Conflict         Code = "conflict"
	OptimisticLock   Code = "optimistic_locking_error"
	TooLarge         Code = "request_entity_too_large"
	UnsupportedMedia Code = "unsupported_media_type"
	PatchFailed      Code = "patch_failed"
	RateLimited      Code = "rate_limited"
	NotImplemented   Code = "not_implemented"
	Internal         Code = "internal_server_error"
	Unavailable      Code = "service_unavailable" // the store does not answer (the health check)
	// SequenceConflict is a code-reference upload older than the stored one
	// (a 409 whose code ld-find-code-refs reads as a warning, not a failure).
	SequenceConflict Code = "updateSequenceId_conflict"
)

// Error is a failure a client can be told about. Message is shown to the
// client for every code but Internal; Err keeps the cause for logs.
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with a message that keeps cause for logs.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the client-facing message of err: the message of its
// *Error, or a generic sentence for anything internal.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Message
	}
	return "an internal error occurred"
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return CodeOf(err) == code }
