package store

import (
	"errors"
	"fmt"
)

// Error codes. Every error a person can act on is an *Error with one of
// these codes; the web package maps each code to one HTTP status (and MCP,
// later, to its own error) in one table. The strings are part of the JSON
// API: they appear as "code" in error bodies.
const (
	ECONFLICT     = "conflict"     // the change collides with the current state: a duplicate, a stale version, a second run
	EFORBIDDEN    = "forbidden"    // the caller may not do this
	EINTERNAL     = "internal"     // a failure on Baton's side; the message never carries details
	EINVALID      = "invalid"      // the input breaks a rule of the domain
	ENOTFOUND     = "not_found"    // the thing asked for does not exist
	ERATELIMITED  = "rate_limited" // too many requests: wait, then try again
	EUNAUTHORIZED = "unauthorized" // the caller is not signed in, or its credentials are wrong
)

// Error is an error with a code and a message a person can act on ("what
// happened and what to do"). Methods return it, wrapped with context by
// fmt.Errorf's %w; callers read it with ErrorCode and ErrorMessage, or
// test it with errors.Is against the sentinel of its code.
type Error struct {
	Code    string // one of the E… constants
	Message string // for people: a full sentence
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNotFound) true for every *Error whose code is
// ENOTFOUND, and likewise for the other sentinels.
func (e *Error) Is(target error) bool {
	s, ok := sentinels[e.Code]
	return ok && target == s
}

// Sentinel errors, one per code: errors.Is(err, ErrConflict) is true for any
// *Error with code ECONFLICT. A sentinel returned as is carries a generic
// message; methods prefer Errorf, which says what exactly went wrong.
var (
	ErrConflict     = &Error{Code: ECONFLICT, Message: "The change collides with a newer one. Reload and try again."}
	ErrForbidden    = &Error{Code: EFORBIDDEN, Message: "You are not allowed to do that."}
	ErrInternal     = &Error{Code: EINTERNAL, Message: "Something went wrong on our side. It was logged; try again in a moment."}
	ErrInvalid      = &Error{Code: EINVALID, Message: "The request is not valid."}
	ErrNotFound     = &Error{Code: ENOTFOUND, Message: "Not found: it may have been deleted, or the link is wrong."}
	ErrRateLimited  = &Error{Code: ERATELIMITED, Message: "Too many requests. Wait a few seconds and try again."}
	ErrUnauthorized = &Error{Code: EUNAUTHORIZED, Message: "Sign in to do that."}
)

var sentinels = map[string]*Error{
	ECONFLICT:     ErrConflict,
	EFORBIDDEN:    ErrForbidden,
	EINTERNAL:     ErrInternal,
	EINVALID:      ErrInvalid,
	ENOTFOUND:     ErrNotFound,
	ERATELIMITED:  ErrRateLimited,
	EUNAUTHORIZED: ErrUnauthorized,
}

// ErrStaleVersion marks the ECONFLICT of an edit based on a handoff version
// that is no longer current, so that a screen can keep the person's draft:
// errors.Is(err, ErrStaleVersion) and errors.Is(err, ErrConflict) are both
// true, and ErrorMessage says which versions collided.
var ErrStaleVersion = errors.New("stale handoff version")

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain: "" for nil,
// EINTERNAL for an error that is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain: ""
// for nil, and for any other error ErrInternal's generic message, as its
// text may hold details that are not for people.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	}
	return ErrInternal.Message
}

// staleVersion is the error of an edit based on version expected while the
// handoff is at current.
func staleVersion(current, expected int) error {
	return fmt.Errorf("%w: %w", ErrStaleVersion,
		Errorf(ECONFLICT, "Someone else changed this handoff (version %d, you had %d).", current, expected))
}

// violation is the kind of constraint a write broke.
type violation int

const (
	noViolation         violation = iota
	uniqueViolation               // a UNIQUE index or the primary key
	foreignKeyViolation           // a reference to a row that does not exist
	checkViolation                // a CHECK, NOT NULL, or a trigger's refusal
)

// violationOf reads the kind of constraint violation from the engine's
// error code (SQLite's extended result code, PostgreSQL's SQLSTATE),
// never from the error text.
func violationOf(err error) violation {
	if v := sqliteViolation(err); v != noViolation {
		return v
	}
	return postgresViolation(err)
}

// constraintError turns a constraint violation that no method expected into
// an ECONFLICT, keeping the driver's error for the log; other errors come
// back unchanged.
func constraintError(err error) error {
	if violationOf(err) == noViolation {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return errors.Join(Errorf(ECONFLICT, "The change breaks a rule of the stored data, so nothing was saved. Reload and try again."), err)
}
