package flag

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Sel is the flag's selector in envKey, the reference's `sel`: a hash of
// the data an SDK evaluates the flag with in that environment (the flag's
// key and variation values, and the environment's targeting: on, archived,
// salt, targets, rules, fallthrough, off variation, prerequisites, event
// tracking). Its version and modification time are left out, so two reads
// answer the same sel exactly when that data is the same.
func (f *Flag) Sel(envKey string) string {
	c := *f.EnvView(envKey)
	c.Version, c.LastModified = 0, 0
	values := make([]json.RawMessage, len(f.Variations))
	for i, v := range f.Variations {
		values[i] = v.Value
	}
	data, err := json.Marshal(struct {
		Key        string            `json:"key"`
		Variations []json.RawMessage `json:"variations"`
		Env        *EnvConfig        `json:"env"`
	}{f.Key, values, &c})
	if err != nil {
		// Every field of a flag encodes; a failure here is a broken invariant.
		panic("flag: encode selector of " + f.Key + ": " + err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
