package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Cursors turns the last key of a page into an opaque continuation token
// and back. A token is signed together with the query it came from, so an
// altered token, or one replayed against another query, is refused.
type Cursors struct {
	secret []byte
}

// NewCursors returns a codec signing with secret (at least 16 bytes).
func NewCursors(secret []byte) (*Cursors, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("cursor secret has %d bytes, at least 16 needed", len(secret))
	}
	return &Cursors{secret: append([]byte(nil), secret...)}, nil
}

type cursorBody struct {
	PK     string `json:"p"`
	SK     string `json:"s"`
	GSI1PK string `json:"gp,omitempty"`
	GSI1SK string `json:"gs,omitempty"`
}

// Encode returns the token that continues q after last.
func (c *Cursors) Encode(q Query, last Item) string {
	body, _ := json.Marshal(cursorBody{PK: last.PK, SK: last.SK, GSI1PK: last.GSI1PK, GSI1SK: last.GSI1SK})
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(c.sign(q, body))
}

// Decode checks a token against q and returns the keys of the last item seen.
func (c *Cursors) Decode(q Query, token string) (Item, error) {
	bodyPart, sigPart, ok := strings.Cut(token, ".")
	if !ok {
		return Item{}, fmt.Errorf("decode cursor: %w", ErrBadCursor)
	}
	body, err1 := base64.RawURLEncoding.DecodeString(bodyPart)
	sig, err2 := base64.RawURLEncoding.DecodeString(sigPart)
	if err1 != nil || err2 != nil || !hmac.Equal(sig, c.sign(q, body)) {
		return Item{}, fmt.Errorf("decode cursor: %w", ErrBadCursor)
	}
	var b cursorBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Item{}, fmt.Errorf("decode cursor: %w", ErrBadCursor)
	}
	return Item{PK: b.PK, SK: b.SK, GSI1PK: b.GSI1PK, GSI1SK: b.GSI1SK}, nil
}

func (c *Cursors) sign(q Query, body []byte) []byte {
	m := hmac.New(sha256.New, c.secret)
	for _, part := range []string{q.Index, q.PK, q.SKPrefix, q.SKFrom, q.SKTo, strconv.FormatBool(q.Descending)} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	m.Write(body)
	return m.Sum(nil)
}

// InRange reports whether sort key sk is selected by q's prefix or bounds.
func (q Query) InRange(sk string) bool {
	if q.SKFrom != "" || q.SKTo != "" {
		return (q.SKFrom == "" || sk >= q.SKFrom) && (q.SKTo == "" || sk <= q.SKTo)
	}
	return strings.HasPrefix(sk, q.SKPrefix)
}
