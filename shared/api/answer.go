package api

// Answer is what an operation answers on success: the status and a zero
// value of the representation's Go type (nil when the answer has no
// body). Groups declare one per built operation; the OpenAPI document is
// generated from them and every answer in the tests is checked against it.
type Answer struct {
	Status int
	Rep    any
	// ETag marks an answer that carries an ETag: a request naming it in
	// If-None-Match gets 304 Not Modified with no body.
	ETag bool
	// Error, when set, is a zero value of the operation's error body, for
	// an operation that does not answer api.ErrorBody (the OAuth token
	// endpoint answers RFC 6749's).
	Error any
}
