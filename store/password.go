package store

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password rules.
const (
	// MinPasswordLen is the shortest password accepted, in characters.
	MinPasswordLen = 12
	// MaxPasswordLen bounds the work one sign-in attempt can ask for.
	MaxPasswordLen = 1024
)

// argon2id parameters: OWASP's first recommendation (19 MiB, 2 passes,
// one lane) costs about 30 ms on a small server, a good trade between a
// sign-in's latency and a guesser's cost. They are stored with each hash,
// so raising them later leaves existing hashes valid.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// validatePassword checks the rules for a new password.
func validatePassword(field, pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPasswordLen:
		return Errorf(EINVALID, "The password is %d characters long; use at least %d. A few unrelated words make a strong one.", n, MinPasswordLen)
	case len(pw) > MaxPasswordLen:
		return Errorf(EINVALID, "The password is too long; keep it under %d bytes.", MaxPasswordLen)
	}
	return nil
}

// HashPassword hashes pw with argon2id and a random salt, and returns the
// PHC string: $argon2id$v=19$m=…,t=…,p=…$salt$hash (unpadded base64).
func HashPassword(pw string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt) // never fails (crypto/rand panics rather)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether pw matches encoded, a string made by
// HashPassword (with any parameters). The comparison takes constant time.
// A malformed hash is an error, never a match.
func CheckPassword(encoded, pw string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errors.New("password hash: not an argon2id PHC string")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("password hash: unsupported argon2 version %q", parts[2])
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, fmt.Errorf("password hash: bad parameters %q", parts[3])
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("password hash: bad salt: %w", err)
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errors.New("password hash: bad key")
	}
	if len(pw) > MaxPasswordLen {
		return false, nil
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyPasswordHash is checked against when an email is unknown, so that a
// sign-in takes as long whether or not the account exists.
var dummyPasswordHash = HashPassword("no account has this password")

// secretBytes is the entropy of session, invite and token secrets.
const secretBytes = 32

// newSecret returns a random secret (32 bytes from crypto/rand, base64url
// without padding) with prefix, and the hash under which it is stored.
func newSecret(prefix string) (secret, hash string) {
	b := make([]byte, secretBytes)
	rand.Read(b)
	secret = prefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret)
}

// hashSecret is the stored form of a secret: hex SHA-256. Lookups go by
// this hash through a unique index; no secret is ever compared in full
// text, and the database never holds one.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
