package destination

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// KeyBits is the size of generated RSA keys (Snowflake takes 2048 and up).
const KeyBits = 2048

// MinSecretLength is the shortest key-encryption secret accepted.
const MinSecretLength = 32

// Sealer encrypts private keys at rest: AES-256-GCM under a key derived
// from a secret kept outside the table (an environment variable, filled
// from a secret store in AWS), each ciphertext bound to its key pair's
// fingerprint, so a sealed key copied onto another item does not open.
type Sealer struct {
	aead cipher.AEAD
	mac  []byte
}

// NewSealer derives the encryption key from secret (at least
// MinSecretLength characters of high entropy).
func NewSealer(secret string) (*Sealer, error) {
	if len(secret) < MinSecretLength {
		return nil, fmt.Errorf("the key-encryption secret must be at least %d characters, it has %d", MinSecretLength, len(secret))
	}
	k := sha256.Sum256([]byte("flagplane destination keys\x00" + secret))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	m := sha256.Sum256([]byte("flagplane destination ids\x00" + secret))
	return &Sealer{aead: aead, mac: m[:]}, nil
}

// Seal encrypts plain for the key pair fingerprint.
func (s *Sealer) Seal(plain []byte, fingerprint string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return s.aead.Seal(nonce, nonce, plain, []byte(fingerprint)), nil
}

// Open decrypts what Seal made for fingerprint.
func (s *Sealer) Open(sealed []byte, fingerprint string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed key is too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], []byte(fingerprint))
}

// derive is a value only holders of the secret can compute (external ids).
func (s *Sealer) derive(label string) string {
	h := hmac.New(sha256.New, s.mac)
	h.Write([]byte(label))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// KeyPair is a generated key pair as stored: the public key and the
// sealed private key, which no answer ever carries.
type KeyPair struct {
	Fingerprint string `json:"fingerprint"`
	// PublicKey is the base64 DER of the SubjectPublicKeyInfo.
	PublicKey string `json:"publicKey"`
	// Sealed is the PKCS#8 private key, encrypted by the Sealer.
	Sealed []byte `json:"sealedPrivateKey"`
	// ProjectKey and EnvKey scope a pair generated for one environment;
	// empty for one generated account-wide.
	ProjectKey string `json:"projectKey,omitempty"`
	EnvKey     string `json:"environmentKey,omitempty"`
	CreatedAt  int64  `json:"createdAt"`
}

// PublicKeys are the public forms of a key pair an answer carries.
type PublicKeys struct {
	// PEM is the SubjectPublicKeyInfo as a PEM "PUBLIC KEY" block.
	PEM string `json:"public_key"`
	// Body is the same without the header lines and line breaks: the value
	// Snowflake's RSA_PUBLIC_KEY takes.
	Body string `json:"public_key_pkcs8"`
}

// Public returns the public forms of k.
func (k *KeyPair) Public() PublicKeys {
	der, _ := base64.StdEncoding.DecodeString(k.PublicKey)
	return PublicKeys{PEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), Body: k.PublicKey}
}

// masked is the key pair as audit entries show it: no sealed key.
func (k KeyPair) masked() KeyPair {
	k.Sealed = nil
	return k
}

// Fingerprint is the hex SHA-256 of a public key's DER.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ParsePublicKey reads an RSA public key a client sends back: PEM (with
// its header lines) or the bare base64 body, line breaks allowed. It
// returns the key's DER (SubjectPublicKeyInfo).
func ParsePublicKey(field, s string) ([]byte, error) {
	raw := strings.TrimSpace(s)
	if strings.HasPrefix(raw, "-----BEGIN") {
		block, _ := pem.Decode([]byte(raw))
		if block == nil || block.Type != "PUBLIC KEY" {
			return nil, fault.New(fault.Invalid, "field %q must be a PEM PUBLIC KEY block or its base64 body", field)
		}
		raw = base64.StdEncoding.EncodeToString(block.Bytes)
	}
	raw = strings.Join(strings.Fields(raw), "")
	der, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fault.New(fault.Invalid, "field %q is not base64: %s", field, err.Error())
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fault.New(fault.Invalid, "field %q is not a public key (SubjectPublicKeyInfo): %s", field, err.Error())
	}
	if _, ok := pub.(*rsa.PublicKey); !ok {
		return nil, fault.New(fault.Invalid, "field %q must be an RSA public key", field)
	}
	return der, nil
}

// generate makes a key pair and seals its private key.
func (s *Service) generate(projectKey, envKey string) (*KeyPair, error) {
	if s.sealer == nil {
		return nil, fault.New(fault.Internal, "key pairs cannot be generated: no key-encryption secret is configured (%s)", EnvKeySecret)
	}
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("generate RSA key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	plain, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	fp := Fingerprint(der)
	sealed, err := s.sealer.Seal(plain, fp)
	if err != nil {
		return nil, fmt.Errorf("seal private key: %w", err)
	}
	return &KeyPair{Fingerprint: fp, PublicKey: base64.StdEncoding.EncodeToString(der), Sealed: sealed,
		ProjectKey: projectKey, EnvKey: envKey, CreatedAt: s.now().UnixMilli()}, nil
}

func (k *KeyPair) put() (store.Write, error) {
	data, err := json.Marshal(k)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode key pair: %w", err)
	}
	key := store.DestinationKeyPairKey(k.Fingerprint)
	return store.Put(store.Item{PK: key.PK, SK: key.SK, Version: 1, Data: data}, store.IfNotExists()), nil
}

// GenerateKeyPair makes and stores a key pair; with a project and
// environment it may be used only by their destinations. The answer holds
// only the public key.
func (s *Service) GenerateKeyPair(ctx context.Context, projectKey, envKey string) (*KeyPair, error) {
	resource := "proj/*:env/*:destination/*"
	var writes []store.Write
	if projectKey != "" {
		env, err := s.envs.Get(ctx, projectKey, envKey)
		if err != nil {
			return nil, err
		}
		resource = Resource(projectKey, envKey, "*")
		writes = append(writes, store.Check(store.EnvironmentKey(projectKey, env.Key), store.IfExists()))
	}
	k, err := s.generate(projectKey, envKey)
	if err != nil {
		return nil, err
	}
	put, err := k.put()
	if err != nil {
		return nil, err
	}
	if _, err := s.log.Commit(ctx, audit.Change{Kind: "destination",
		Writes: append([]store.Write{put}, writes...), Resource: resource, Actions: []string{"createDestination"},
		Name: "key pair " + k.Fingerprint[:16], TitleVerb: "generated the warehouse destination", Current: k.masked(),
	}); err != nil {
		return nil, err
	}
	return k, nil
}

// keyPair loads the key pair whose public key is der.
func (s *Service) keyPair(ctx context.Context, field string, der []byte) (*KeyPair, error) {
	fp := Fingerprint(der)
	k, err := record.Load(ctx, s.table, store.DestinationKeyPairKey(fp), "key pair", func(it store.Item) (*KeyPair, error) {
		var k KeyPair
		if err := json.Unmarshal(it.Data, &k); err != nil {
			return nil, fmt.Errorf("decode key pair %s: %w", fp, err)
		}
		return &k, nil
	})
	if fault.Is(err, fault.NotFound) {
		return nil, fault.New(fault.Invalid, "field %q is not a public key flagplane generated: generate a key pair first and use its public key", field)
	}
	return k, err
}

// PrivateKey opens the private key of the key pair whose public key is
// publicKey (either form): what a loader signing in to the warehouse as
// the destination's user needs, and nothing that answers a request.
func (s *Service) PrivateKey(ctx context.Context, publicKey string) (*rsa.PrivateKey, error) {
	if s.sealer == nil {
		return nil, fault.New(fault.Internal, "no key-encryption secret is configured (%s)", EnvKeySecret)
	}
	der, err := ParsePublicKey("publicKey", publicKey)
	if err != nil {
		return nil, err
	}
	k, err := s.keyPair(ctx, "publicKey", der)
	if err != nil {
		return nil, err
	}
	plain, err := s.sealer.Open(k.Sealed, k.Fingerprint)
	if err != nil {
		return nil, fmt.Errorf("open private key %s: %w", k.Fingerprint, err)
	}
	key, err := x509.ParsePKCS8PrivateKey(plain)
	if err != nil {
		return nil, fmt.Errorf("decode private key %s: %w", k.Fingerprint, err)
	}
	rk, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("private key %s is not RSA", k.Fingerprint)
	}
	return rk, nil
}
