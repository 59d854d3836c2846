package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/anthropic"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/agent/openai"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/mirror"
	"github.com/baton-dev/baton/web"
)

// config is what flags and the environment set. Flags override the environment.
type config struct {
	Addr     string
	DB       string
	Provider string
	Model    string
	LogLevel string
	// Hosts are extra host names requests may use (BATON_HOSTS, comma-separated).
	Hosts []string
	// MemoryTokens is the token budget of the workspace memory section in
	// prompts; 0 means agent.DefaultMemoryBudget.
	MemoryTokens int
	// TokenBudget caps the tokens a workspace's model calls use per calendar
	// month (UTC); zero turns the cap off.
	TokenBudget int64
	// tokenBudgetErr is a BATON_TOKEN_BUDGET that is not a number, reported
	// by withBudget.
	tokenBudgetErr error
	// PublicURL is the address people open Baton at when it is not the one
	// it listens on, e.g. behind a reverse proxy (BATON_PUBLIC_URL). Invite
	// links use it; an https URL marks the session cookie Secure.
	PublicURL string
	// SessionIdle and SessionLifetime end sessions unused for that long,
	// and that long after sign-in (BATON_SESSION_IDLE, BATON_SESSION_LIFETIME).
	SessionIdle, SessionLifetime time.Duration
	// envErr is the first environment value that could not be read,
	// reported by runServe.
	envErr error

	// DBOptions tune the PostgreSQL connections (BATON_DB_MAX_CONNS,
	// BATON_DB_STATEMENT_TIMEOUT, BATON_DB_LOCK_TIMEOUT).
	DBOptions store.Options
	// SessionKey signs session cookies (BATON_SESSION_KEY). Instances
	// behind one load balancer share it, or the key kept in the database.
	SessionKey string

	// MirrorURL, when set, is the PostgreSQL database accepted thread
	// handoffs are copied to (BATON_MIRROR_URL).
	MirrorURL string

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
	c.MemoryTokens, _ = strconv.Atoi(getenv("BATON_MEMORY_TOKENS"))
	for _, h := range strings.Split(getenv("BATON_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.Hosts = append(c.Hosts, h)
		}
	}
	c.MirrorURL = strings.TrimSpace(getenv("BATON_MIRROR_URL"))
	c.SessionKey = strings.TrimSpace(getenv("BATON_SESSION_KEY"))
	if v := strings.TrimSpace(getenv("BATON_DB_MAX_CONNS")); v != "" {
		n, err := strconv.Atoi(v)
		if (err != nil || n < 1) && c.envErr == nil {
			c.envErr = fmt.Errorf("BATON_DB_MAX_CONNS=%q: want a number of connections, e.g. 10", v)
		}
		c.DBOptions.MaxConns = n
	}
	for key, dst := range map[string]*time.Duration{"BATON_DB_STATEMENT_TIMEOUT": &c.DBOptions.StatementTimeout, "BATON_DB_LOCK_TIMEOUT": &c.DBOptions.LockTimeout} {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			d, err := time.ParseDuration(v)
			if (err != nil || d <= 0) && c.envErr == nil {
				c.envErr = fmt.Errorf("%s=%q: want a duration, e.g. 30s", key, v)
			}
			*dst = d
		}
	}
	c.AnthropicKey, c.AnthropicBaseURL = getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_BASE_URL")
	c.OpenAIKey, c.OpenAIBaseURL = getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	c.PublicURL = strings.TrimSpace(getenv("BATON_PUBLIC_URL"))
	c.SessionIdle, c.SessionLifetime = web.DefaultSessionIdle, web.DefaultSessionLifetime
	for key, dst := range map[string]*time.Duration{"BATON_SESSION_IDLE": &c.SessionIdle, "BATON_SESSION_LIFETIME": &c.SessionLifetime} {
		if v := getenv(key); v != "" {
			d, err := parseSpan(v)
			if err != nil && c.envErr == nil {
				c.envErr = fmt.Errorf("%s=%q: %w", key, v, err)
			}
			*dst = d
		}
	}
	if v := strings.TrimSpace(getenv("BATON_TOKEN_BUDGET")); v != "" {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
		if err != nil {
			c.tokenBudgetErr = fmt.Errorf("BATON_TOKEN_BUDGET=%q is not a number of tokens: set it to tokens per month, e.g. 1000000, or 0 for no budget", v)
		}
		c.TokenBudget = n
	}
}

func (c *config) flags(fs *flag.FlagSet, serve bool) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (BATON_ADDR)")
	fs.StringVar(&c.DB, "db", c.DB, dbUsage)
	fs.StringVar(&c.Provider, "provider", c.Provider, "model provider: offline, anthropic or openai (BATON_PROVIDER)")
	fs.StringVar(&c.Model, "model", c.Model, "model name; each provider has a default (BATON_MODEL)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (BATON_LOG_LEVEL)")
	fs.IntVar(&c.MemoryTokens, "memory-tokens", c.MemoryTokens, "tokens of workspace memory given to brainstorms and plans; 0 for the default of 1500 (BATON_MEMORY_TOKENS)")
	if serve {
		fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "the https://… address people open Baton at, behind a proxy; used in invite links, https marks cookies Secure (BATON_PUBLIC_URL)")
		for name, dst := range map[string]*time.Duration{"session-idle": &c.SessionIdle, "session-lifetime": &c.SessionLifetime} {
			fs.Func(name, "end sessions "+map[string]string{"session-idle": "unused for", "session-lifetime": "this long after sign-in, at most"}[name]+
				" this long: days (7d) or a duration (12h) (BATON_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))+")", func(v string) error {
				d, err := parseSpan(v)
				if err != nil {
					return err
				}
				*dst = d
				return nil
			})
		}
		fs.Func("token-budget", "tokens the workspace's model calls may use per calendar month, UTC; 0 for no budget (BATON_TOKEN_BUDGET)", func(v string) error {
			n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("want a number of tokens, e.g. 1000000, or 0 for no budget")
			}
			// The flag overrides the environment, a bad value in it too.
			c.TokenBudget, c.tokenBudgetErr = n, nil
			return nil
		})
	}
}

// dbUsage describes the --db flag of every subcommand.
const dbUsage = "SQLite database file (its folder is created) or a postgres:// URL (BATON_DB)"

// openDB opens the database --db or BATON_DB names, with the PostgreSQL
// settings of the environment. A bad setting stops here, before anything
// is opened.
func (c *config) openDB(ctx context.Context) (*store.DB, error) {
	if c.envErr != nil {
		return nil, &exitCodeError{code: 2, err: c.envErr}
	}
	return store.OpenWith(ctx, c.DB, c.DBOptions)
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

// extractorAndJudge says how handoffs are extracted and decision reversals
// judged with provider p: the offline provider does both by its rules; with
// a model the extractor is nil (web and runExtract then ask the model for
// structured output) and the model judges, the rule deciding when it can't.
func extractorAndJudge(p agent.Provider) (agent.Extractor, agent.Judge) {
	if x, ok := p.(*offline.Provider); ok {
		return x, agent.RuleJudge
	}
	return nil, agent.ReversalJudge(p)
}

// summariser says who writes thread-handoff summaries with provider p: the
// offline provider's rules, or the model.
func summariser(p agent.Provider) agent.Summariser {
	if _, ok := p.(*offline.Provider); ok {
		return agent.RuleSummariser
	}
	return agent.ModelSummariser(p)
}

// newMirror returns the PostgreSQL mirror of accepted thread handoffs, or
// nil when BATON_MIRROR_URL is not set. A URL that cannot be parsed stops
// start-up; a mirror that is down does not (it is retried).
func (c *config) newMirror(db *store.DB, log *slog.Logger) (*mirror.Mirror, error) {
	if c.MirrorURL == "" {
		return nil, nil
	}
	m, err := mirror.New(mirror.Config{URL: c.MirrorURL, Outbox: db, Logger: log})
	if err != nil {
		return nil, &exitCodeError{code: 2, err: err}
	}
	return m, nil
}

// withBudget puts p behind the workspace's monthly token budget, counted in
// db, if one is set. The offline provider is never limited: its calls cost
// nothing. A budget that is not a number or is negative stops start-up.
func (c *config) withBudget(p agent.Provider, db *store.DB) (agent.Provider, error) {
	if c.tokenBudgetErr != nil {
		return nil, &exitCodeError{code: 2, err: c.tokenBudgetErr}
	}
	if c.TokenBudget < 0 {
		return nil, &exitCodeError{code: 2, err: fmt.Errorf("BATON_TOKEN_BUDGET=%d is negative: set tokens per month, or 0 for no budget", c.TokenBudget)}
	}
	if _, free := p.(*offline.Provider); c.TokenBudget == 0 || free {
		return p, nil
	}
	// The budget is per workspace: the server names the caller's in the
	// context of every model call (agent.WithWorkspace); a call that names
	// none (the extract command) counts against the default workspace.
	return agent.WithBudget(p, c.TokenBudget, func(ctx context.Context) (int64, error) {
		workspace := agent.WorkspaceFrom(ctx)
		if workspace == "" {
			workspace = db.DefaultWorkspaceID()
		}
		return db.TokensUsed(ctx, workspace, agent.MonthStart(time.Now()))
	}), nil
}

// parseSpan reads a session length: days ("7d") or a Go duration ("12h").
func parseSpan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 && n <= 3650 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= time.Minute {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not a length of time: use days (7d) or a duration of at least a minute (12h)", s)
}

// publicURL returns BATON_PUBLIC_URL without a trailing slash, checked:
// an http or https URL with a host and nothing after the path.
func (c *config) publicURL() (*url.URL, error) {
	if c.PublicURL == "" {
		return nil, nil
	}
	u, err := url.Parse(strings.TrimRight(c.PublicURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, &exitCodeError{code: 2, err: fmt.Errorf("BATON_PUBLIC_URL=%q is not an address to open Baton at: use e.g. https://baton.example.com", c.PublicURL)}
	}
	return u, nil
}

// allowedHosts are the Host names the server answers to besides loopback:
// the address it listens on, BATON_HOSTS and BATON_PUBLIC_URL's host.
// Listening on every interface with none of them is refused: any name
// would be answered, so a DNS-rebinding page could use Baton.
func (c *config) allowedHosts() ([]string, error) {
	hosts := append([]string(nil), c.Hosts...)
	if u, err := c.publicURL(); err != nil {
		return nil, err
	} else if u != nil {
		hosts = append(hosts, u.Hostname())
	}
	host, _, err := net.SplitHostPort(c.Addr)
	switch {
	case err != nil:
	case host == "" || host == "0.0.0.0" || host == "::" || host == "[::]":
		if len(hosts) == 0 {
			return nil, &exitCodeError{code: 2, err: fmt.Errorf("listening on every interface (%s) needs BATON_HOSTS: set BATON_HOSTS to the host names people use to reach Baton (e.g. BATON_HOSTS=baton.example.com), or listen on one address with --addr", c.Addr)}
		}
	default:
		hosts = append(hosts, host)
	}
	return hosts, nil
}

// authConfig is the accounts configuration of a server listening on c.Addr.
func (c *config) authConfig() (web.AuthConfig, error) {
	if c.envErr != nil {
		return web.AuthConfig{}, &exitCodeError{code: 2, err: c.envErr}
	}
	if c.SessionLifetime < c.SessionIdle {
		return web.AuthConfig{}, &exitCodeError{code: 2, err: fmt.Errorf("the session lifetime (%v) is shorter than the idle timeout (%v): make BATON_SESSION_LIFETIME at least BATON_SESSION_IDLE", c.SessionLifetime, c.SessionIdle)}
	}
	u, err := c.publicURL()
	if err != nil {
		return web.AuthConfig{}, err
	}
	return web.AuthConfig{
		SetupCode:       setupCode(c.Addr),
		SessionIdle:     c.SessionIdle,
		SessionLifetime: c.SessionLifetime,
		SecureCookies:   u != nil && u.Scheme == "https",
	}, nil
}
