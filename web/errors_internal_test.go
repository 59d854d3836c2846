package web

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// One table gives every error its status and code, for pages and the API.
func TestErrorResponse(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"not found", fmt.Errorf("thread 7: %w", store.ErrNotFound), http.StatusNotFound, store.ENOTFOUND, store.ErrNotFound.Message},
		{"invalid", fmt.Errorf("create: %w", store.Errorf(store.EINVALID, "The title is too long.")), http.StatusUnprocessableEntity, store.EINVALID, "The title is too long."},
		{"conflict", store.Errorf(store.ECONFLICT, "The file a.go is already in this handoff."), http.StatusConflict, store.ECONFLICT, "The file a.go is already in this handoff."},
		{"unauthorized", store.ErrUnauthorized, http.StatusUnauthorized, store.EUNAUTHORIZED, store.ErrUnauthorized.Message},
		{"forbidden", store.ErrForbidden, http.StatusForbidden, store.EFORBIDDEN, store.ErrForbidden.Message},
		{"rate limited", store.ErrRateLimited, http.StatusTooManyRequests, store.ERATELIMITED, store.ErrRateLimited.Message},
		{"internal", store.Errorf(store.EINTERNAL, "Planning could not be saved."), http.StatusInternalServerError, store.EINTERNAL, "Planning could not be saved."},
		{"bad JSON", &store.Error{Code: eBadJSON, Message: "Not JSON."}, http.StatusBadRequest, eBadJSON, "Not JSON."},
		{"extraction failed", &store.Error{Code: eExtractionFailed, Message: "The model failed."}, http.StatusBadGateway, eExtractionFailed, "The model failed."},
		{"unknown code", &store.Error{Code: "mystery", Message: "?"}, http.StatusInternalServerError, "mystery", "?"},
		{"route not found", echo.ErrNotFound, http.StatusNotFound, store.ENOTFOUND, "Not found: the link may be wrong."},
		{"rate limiter", echo.NewHTTPError(http.StatusTooManyRequests, "Too many requests to the model at once."), http.StatusTooManyRequests, store.ERATELIMITED, "Too many requests to the model at once."},
		{"body too large", echo.NewHTTPError(http.StatusRequestEntityTooLarge), http.StatusRequestEntityTooLarge, "request_entity_too_large",
			"The request is too large: bodies can be at most 1 MiB, and a message at most 32 KiB."},
		{"method not allowed", echo.ErrMethodNotAllowed, http.StatusMethodNotAllowed, "method_not_allowed", "That action is not available here."},
		{"shutting down", echo.NewHTTPError(http.StatusServiceUnavailable, "Baton is shutting down."), http.StatusServiceUnavailable, "service_unavailable", "Baton is shutting down."},
		{"any other error", errors.New("database is locked (/var/lib/baton.db)"), http.StatusInternalServerError, store.EINTERNAL, store.ErrInternal.Message},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := errorResponse(tt.err)
			if status != tt.wantStatus || e.Code != tt.wantCode || e.Message != tt.wantMsg {
				t.Fatalf("errorResponse=%d %q %q, want %d %q %q", status, e.Code, e.Message, tt.wantStatus, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
