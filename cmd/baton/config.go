package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/anthropic"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/agent/openai"
)

// config is what flags and the environment set. Flags override the environment.
type config struct {
	Addr     string
	DB       string
	Provider string
	Model    string
	LogLevel string

	AnthropicKey, AnthropicBaseURL string
	OpenAIKey, OpenAIBaseURL       string
}

func (c *config) fromEnv(getenv func(string) string) {
	or := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	c.Addr = or("BATON_ADDR", "127.0.0.1:8080")
	c.DB = or("BATON_DB", "data/baton.db")
	c.Provider = or("BATON_PROVIDER", "offline")
	c.Model = getenv("BATON_MODEL")
	c.LogLevel = or("BATON_LOG_LEVEL", "info")
	c.AnthropicKey, c.AnthropicBaseURL = getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_BASE_URL")
	c.OpenAIKey, c.OpenAIBaseURL = getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
}

func (c *config) flags(fs *flag.FlagSet, serve bool) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (BATON_ADDR)")
	fs.StringVar(&c.DB, "db", c.DB, "SQLite database file; its folder is created (BATON_DB)")
	fs.StringVar(&c.Provider, "provider", c.Provider, "model provider: offline, anthropic or openai (BATON_PROVIDER)")
	fs.StringVar(&c.Model, "model", c.Model, "model name; each provider has a default (BATON_MODEL)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (BATON_LOG_LEVEL)")
}

func (c *config) logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// newProvider builds the configured provider. A missing key stops start-up
// with a message naming the variable and the offline alternative.
func (c *config) newProvider(log *slog.Logger) (agent.Provider, error) {
	switch strings.ToLower(c.Provider) {
	case "offline", "":
		return offline.New(), nil
	case anthropic.Name:
		return anthropic.New(anthropic.Config{APIKey: c.AnthropicKey, BaseURL: c.AnthropicBaseURL, Model: c.Model, Logger: log})
	case openai.Name:
		return openai.New(openai.Config{APIKey: c.OpenAIKey, BaseURL: c.OpenAIBaseURL, Model: c.Model, Logger: log})
	}
	return nil, &exitCodeError{code: 2, err: fmt.Errorf("unknown provider %q: use offline, anthropic or openai (BATON_PROVIDER)", c.Provider)}
}
