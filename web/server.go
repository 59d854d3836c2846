// Package web is Baton's HTTP server: routes, handlers (one file per
// feature), middleware, server-sent events and the JSON API.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/sessions"
	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
	"github.com/baton-dev/baton/views"
)

// Config is what the server needs from its caller.
type Config struct {
	DB       Store
	Provider agent.Provider
	Logger   *slog.Logger
	// Extractor extracts handoffs without a model (the offline rules). When
	// nil, extraction asks Provider for structured output.
	Extractor agent.Extractor
	// Summariser writes thread-handoff summaries (the offline rules, or a
	// model). When nil, Provider summarises with structured output.
	Summariser agent.Summariser
	// Mirror, when set, copies accepted thread handoffs to PostgreSQL.
	Mirror Mirror
	// Judge decides whether a frozen decision reverses an earlier one; when
	// it cannot decide, the rule does. Nil means the rule (agent.RuleJudge).
	Judge agent.Judge
	// SessionKey signs session cookies (flash messages); 32+ random bytes.
	SessionKey []byte
	// Version is shown in /healthz.
	Version string
	// MemoryBudget is how many tokens of workspace memory go into prompts
	// (agent.DefaultMemoryBudget when zero).
	MemoryBudget int
	// Hosts are the host names (without port) requests may name besides
	// localhost, 127.0.0.1 and ::1; "*" allows any. Checking the Host
	// header keeps a DNS-rebinding page from talking to a local Baton.
	Hosts []string
	// ModelRate limits model-backed requests per client (per second, with a
	// burst of ten times that). Zero means 2/s.
	ModelRate float64
	// JobGrace is how long an extraction runs after the last page
	// following it went away, so that a reload can rejoin it. Zero means
	// two seconds.
	JobGrace time.Duration
	// JobConnectGrace is how long an extraction, or a reply, runs before a
	// page follows it, so that the page that started it can load and
	// connect. Zero means ten seconds.
	JobConnectGrace time.Duration
	// InstanceID names this process among the instances that share a
	// PostgreSQL database; empty means its host, process ID and a random
	// part. JobLease is how long a job of a dead instance holds before
	// another instance recovers it (zero: 30s), and JobHeartbeat how often
	// leases are renewed and expired jobs swept (zero: 5s, or a third of
	// the lease). On SQLite, jobs live in memory and these are unused.
	InstanceID   string
	JobLease     time.Duration
	JobHeartbeat time.Duration
	// Auth configures accounts and sign-in sessions.
	Auth AuthConfig
	// ShareRate limits share-link requests per client (per second, with a
	// burst of five times that). Zero means 10/s.
	ShareRate float64
	// PublicURL is the address people open Baton at (BATON_PUBLIC_URL),
	// without a trailing slash; links Baton hands out (invites) start with
	// it. Empty means the address of the request.
	PublicURL string
	// FeedRefresh is how often the /agents page's blackboard feed looks for
	// new entries. Zero means views.DefaultFeedRefresh (5s).
	FeedRefresh time.Duration
}

// Server serves Baton over HTTP. Its fields are set once in New and only
// read afterwards; per-request state lives in the request's context.
type Server struct {
	db       Store
	provider agent.Provider
	log      *slog.Logger
	assets   *static.Assets
	markdown *views.Markdown
	items    *views.HTMLCache // rendered message items
	// reviewItems are rendered review items, by content (views.Review.Items).
	reviewItems *views.HTMLCache
	pages       *compressedPages // compressed page segments, by content
	sessions    *sessions.CookieStore
	auth        *auth
	version     string
	// publicURL is Config.PublicURL.
	publicURL string
	// feedRefresh is Config.FeedRefresh.
	feedRefresh time.Duration
	// extractor extracts handoffs; nil asks provider.
	extractor agent.Extractor
	judge     agent.Judge
	// summariser writes thread-handoff summaries; drafts holds their
	// previews until they are accepted or declined; mirror may be nil.
	summariser agent.Summariser
	drafts     *handoffDrafts
	mirror     Mirror
	// jobs runs replies, extractions and plans.
	jobs *jobRunner
	// live tells a handoff's open pages that it changed; liveBus, on a
	// database other instances share, carries the changes between them
	// (see announce).
	live    *liveHub
	liveBus liveBus
	// background tracks detached work (memory capture) for Shutdown.
	background   sync.WaitGroup
	memoryBudget int
	echo         *echo.Echo
	gzip         http.Handler // echo behind compression
	started      time.Time
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ModelRate == 0 {
		cfg.ModelRate = 2
	}
	if cfg.JobGrace == 0 {
		cfg.JobGrace = defaultJobGrace
	}
	if cfg.JobConnectGrace == 0 {
		cfg.JobConnectGrace = defaultJobConnectGrace
	}
	if cfg.ShareRate == 0 {
		cfg.ShareRate = 10
	}
	if cfg.Judge == nil {
		cfg.Judge = agent.RuleJudge
	}
	if cfg.Summariser == nil {
		cfg.Summariser = agent.ModelSummariser(cfg.Provider)
	}
	s := &Server{
		db:           cfg.DB,
		provider:     cfg.Provider,
		extractor:    cfg.Extractor,
		judge:        cfg.Judge,
		summariser:   cfg.Summariser,
		drafts:       newHandoffDrafts(),
		mirror:       cfg.Mirror,
		log:          cfg.Logger,
		assets:       static.New(),
		markdown:     views.NewMarkdown(),
		items:        views.NewHTMLCache(1024),
		reviewItems:  views.NewHTMLCache(4096),
		pages:        newCompressedPages(32 << 20),
		sessions:     sessions.NewCookieStore(cfg.SessionKey),
		auth:         newAuth(cfg.Auth, cfg.SessionKey),
		version:      cfg.Version,
		publicURL:    cfg.PublicURL,
		feedRefresh:  cfg.FeedRefresh,
		jobs:         newJobRunner(cfg.Logger, cfg.JobGrace, cfg.JobConnectGrace),
		live:         newLiveHub(),
		memoryBudget: cfg.MemoryBudget,
		started:      time.Now(),
	}
	if js, ok := cfg.DB.(jobStore); ok && js.Shared() {
		s.jobs.share(js, sharedConfig{instance: cfg.InstanceID, lease: cfg.JobLease, heartbeat: cfg.JobHeartbeat})
		s.shareLive(js)
	}
	s.sessions.Options = &sessions.Options{Path: "/", MaxAge: 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	// Baton binds to loopback and sits behind nothing by default: trust the
	// peer address, not X-Forwarded-For, for rate limits.
	e.IPExtractor = echo.ExtractIPDirect()
	e.Use(allowHosts(cfg.Hosts))
	e.Use(middleware.RequestID())
	e.Use(s.logRequests)
	e.Use(s.recoverPanics)
	e.Use(securityHeaders)
	e.Use(middleware.BodyLimit("1M"))
	s.echo = e
	// klauspost's gzip at its fastest level: a few times cheaper than
	// compress/gzip, and pages are small and compress well anyway. Event
	// streams are left alone: compression buffers, and they must reach the
	// browser as written.
	gz, err := gzhttp.NewWrapper(gzhttp.MinSize(1024), gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.ExceptContentTypes([]string{"text/event-stream"}))
	if err != nil {
		panic(err) // the options are constants
	}
	s.gzip = gz(e)

	modelLimit := middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               s.limiterStore("model", cfg.ModelRate, max(1, int(10*cfg.ModelRate))),
		IdentifierExtractor: func(c echo.Context) (string, error) { return c.RealIP(), nil },
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			return echo.NewHTTPError(http.StatusTooManyRequests, "Too many requests to the model at once. Wait a few seconds and try again.")
		},
	})

	modelLimit = chain(modelLimit, longWrite)

	e.GET("/healthz", s.handleHealth)
	e.GET("/schemas/"+envelope.SchemaFile, s.handleSchema)
	e.GET(static.Prefix+"*", echo.WrapHandler(s.assets))

	s.routes(e, modelLimit, cfg.ShareRate)
	return s
}

var errCSRF = echo.NewHTTPError(http.StatusForbidden, "This form has expired or came from another site. Reload the page and try again.")

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.gzip.ServeHTTP(w, r)
}

// HTTPServer wraps the handler in an http.Server with timeouts. Event
// streams lift the write deadline for themselves.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Shutdown refuses new replies, extractions and plans (503), cancels the
// running ones (a reply is stored as stopped, an extraction and a plan as
// cancelled) and waits for them to be saved, bounded by ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.live.close()
	return errors.Join(s.jobs.shutdown(ctx), wait(ctx, &s.background))
}

// handleHealth serves GET /healthz.
func (s *Server) handleHealth(c echo.Context) error {
	health := map[string]any{
		"status":   "ok",
		"version":  s.version,
		"provider": s.provider.Name(),
		"model":    s.provider.Model(),
	}
	if s.mirror != nil {
		health["mirror"] = s.mirror.Status(c.Request().Context())
	}
	return c.JSON(http.StatusOK, health)
}

// securityHeaders sets the CSP and friends on every response. No inline
// script or style is allowed anywhere.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		return next(c)
	}
}

// crossOrigin refuses writes a browser sends from another origin: by Fetch
// Metadata (Sec-Fetch-Site), else by the Origin header. Requests without
// either (scripts, agents) and reads pass.
var crossOrigin = http.NewCrossOriginProtection()

// requireJSON guards the JSON API: bodies must be JSON (a cross-site HTML
// form cannot send that without a CORS preflight) and browsers must not be
// writing from another site or origin. The API uses no cookies, and
// without CORS headers another site cannot read what a GET returns.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if err := crossOrigin.Check(r); err != nil {
			return &store.Error{Code: eCrossSite, Message: "Cross-site requests to the API are not allowed."}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			ct := r.Header.Get(echo.HeaderContentType)
			if (ct != "" || r.ContentLength != 0) && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
				return &store.Error{Code: eUnsupportedMediaType, Message: "Send the body as JSON with Content-Type: application/json."}
			}
		}
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		if c.Path() == "/healthz" || strings.HasPrefix(c.Path(), static.Prefix) {
			level = slog.LevelDebug
		}
		s.log.Log(c.Request().Context(), level, "request",
			"method", c.Request().Method, "path", c.Request().URL.Path, "status", status,
			"duration", time.Since(start), "bytes", c.Response().Size,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return nil
	}
}

func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("panic", "path", c.Request().URL.Path, "panic", r, "stack", string(debug.Stack()))
				err = errors.New("internal error")
			}
		}()
		return next(c)
	}
}

// allowHosts refuses requests whose Host is not this server's: loopback
// names, and the configured ones.
func allowHosts(extra []string) echo.MiddlewareFunc {
	ok := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, h := range extra {
		ok[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			host := c.Request().Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !ok["*"] && !ok[strings.ToLower(strings.Trim(host, "[]"))] {
				return echo.NewHTTPError(http.StatusMisdirectedRequest,
					"Unknown host "+strconv.Quote(c.Request().Host)+". Open Baton by its address, or add the name to BATON_HOSTS.")
			}
			return next(c)
		}
	}
}

// longWrite gives a request that waits for a model a longer write deadline
// than the server's, so that a slow reply is not cut off after its work is saved.
func longWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Now().Add(15 * time.Minute))
		return next(c)
	}
}

// chain applies middleware a, then b.
func chain(a, b echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc { return a(b(next)) }
}

// Routes lists the server's routes (method and path pattern) as
// registered, including the groups' catch-alls (method
// echo.RouteNotFound). The access tests check every one of them.
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }
