package pgwire

import (
	"countwall/pgerror"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"
)

// ParseVerifier reads a SCRAM-SHA-256 verifier in PostgreSQL's stored form:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64 parts.
func ParseVerifier(v string) (scram.StoredCredentials, error) {
	var sc scram.StoredCredentials
	rest, ok := strings.CutPrefix(v, "SCRAM-SHA-256$")
	if !ok {
		return sc, errors.New("verifier must start with SCRAM-SHA-256$")
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return sc, errors.New("verifier has no keys part")
	}
	iterText, saltText, ok1 := strings.Cut(params, ":")
	storedText, serverText, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return sc, errors.New("verifier is not iterations:salt$storedkey:serverkey")
	}
	iters, err := strconv.Atoi(iterText)
	if err != nil || iters < 1 {
		return sc, errors.New("verifier iteration count is not a positive integer")
	}
	salt, err1 := base64.StdEncoding.DecodeString(saltText)
	stored, err2 := base64.StdEncoding.DecodeString(storedText)
	server, err3 := base64.StdEncoding.DecodeString(serverText)
	if err := errors.Join(err1, err2, err3); err != nil {
		return sc, fmt.Errorf("verifier is not valid base64: %w", err)
	}
	if len(stored) != sha256.Size || len(server) != sha256.Size {
		return sc, errors.New("verifier keys must be 32 bytes each")
	}
	sc.Salt, sc.Iters, sc.StoredKey, sc.ServerKey = string(salt), iters, stored, server
	return sc, nil
}

// NewVerifier makes a verifier for password with a fresh random salt.
func NewVerifier(password string, iterations int) (string, error) {
	if iterations < 4096 {
		iterations = 4096
	}
	client, err := scram.SHA256.NewClient("", password, "")
	if err != nil {
		return "", fmt.Errorf("preparing password: %w", err)
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sc := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: iterations})
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, enc(salt), enc(sc.StoredKey), enc(sc.ServerKey)), nil
}

// decoyCredentials are what an unknown analyst is checked against, so that
// the exchange fails the same way as a wrong password and does not reveal
// which analysts exist.
func decoyCredentials(secret []byte, analyst string) scram.StoredCredentials {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(analyst))
	salt := mac.Sum(nil)[:16]
	key := make([]byte, sha256.Size)
	rand.Read(key)
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: 4096}, StoredKey: key, ServerKey: key}
}

// authenticate runs SCRAM-SHA-256 (or trust) for the startup's user.
func (c *conn) authenticate(startup *pgproto3.StartupMessage) bool {
	if c.srv.opts.Trust {
		return true
	}
	creds := decoyCredentials(c.srv.decoyKey, c.analyst)
	if c.srv.opts.Verifier != nil {
		if v, ok := c.srv.opts.Verifier(c.analyst); ok {
			parsed, err := ParseVerifier(v)
			if err != nil {
				c.log.Error("analyst has an unusable verifier", "analyst", c.analyst, "err", err)
			} else {
				creds = parsed
			}
		}
	}
	// The SCRAM user name is ignored, as PostgreSQL does: the startup's user counts.
	server, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		c.fatal(pgerror.InternalError, "authentication is unavailable")
		return false
	}
	conv := server.NewConversation()
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := c.be.Flush(); err != nil {
		return false
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return false
	}
	msg, err := c.be.Receive()
	if err != nil {
		return false
	}
	initial, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || initial.AuthMechanism != "SCRAM-SHA-256" {
		c.fatal(pgerror.InvalidAuthorization, "SCRAM-SHA-256 authentication is required")
		return false
	}
	serverFirst, err := conv.Step(string(initial.Data))
	if err != nil {
		c.authFailed()
		return false
	}
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.be.Flush(); err != nil {
		return false
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return false
	}
	msg, err = c.be.Receive()
	if err != nil {
		return false
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		c.fatal(pgerror.ProtocolViolation, "expected a SASL response")
		return false
	}
	serverFinal, err := conv.Step(string(resp.Data))
	if err != nil || !conv.Valid() {
		c.authFailed()
		return false
	}
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
	return true
}

func (c *conn) authFailed() {
	c.log.Warn("authentication failed", "analyst", c.analyst)
	c.fatal(pgerror.InvalidPassword, fmt.Sprintf("password authentication failed for user %q", c.analyst))
}
