package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// MaxMessage is the largest message a payload travels in: SQS takes up
// to 256 KiB, and JSON-encoding the body inside a message escapes some bytes.
const MaxMessage = 200 << 10

// Split cuts a payload whose message would exceed max bytes into payloads
// of consecutive events that each fit (an event larger than max travels
// alone). The cut depends only on the body, and each part's payload id is
// the original's with "#<part>", so a retried payload is cut the same way
// and each part still counts once. A payload that fits is returned as is.
func Split(p Payload, max int) ([]Payload, error) {
	whole, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	if len(whole) <= max || IsDiagnostic(p.Source) {
		return []Payload{p}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(p.Body, &raws); err != nil {
		return nil, fmt.Errorf("split payload: %w: %v", errNotArray, err)
	}
	overhead := len(whole) - len(p.Body) + 16
	var out []Payload
	var part bytes.Buffer
	flush := func() {
		if part.Len() == 0 {
			return
		}
		q := p
		q.Body = append(append([]byte(nil), part.Bytes()...), ']')
		if p.PayloadID != "" {
			q.PayloadID = p.PayloadID + "#" + strconv.Itoa(len(out))
		}
		out = append(out, q)
		part.Reset()
	}
	for _, raw := range raws {
		// Escaping inside the message may double a byte; count events at twice their size to stay under max.
		if part.Len() > 0 && overhead+2*(part.Len()+len(raw)+1) > max {
			flush()
		}
		if part.Len() == 0 {
			part.WriteByte('[')
		} else {
			part.WriteByte(',')
		}
		part.Write(raw)
	}
	flush()
	return out, nil
}
