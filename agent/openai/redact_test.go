package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/openai"
)

// TestCredentialsInBaseURLNeverShown checks that a password or a key in
// OPENAI_BASE_URL never reaches the message people see (and the database).
func TestCredentialsInBaseURLNeverShown(t *testing.T) {
	p, err := openai.New(openai.Config{BaseURL: "http://user:s3cret@127.0.0.1:1/v1?api-key=k3y", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, "hi")}}, func(agent.Delta) error { return nil })
	if err == nil {
		t.Fatal("err=nil, want a connection error")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "k3y") {
		t.Fatalf("message shows a credential: %s", msg)
	}
}
