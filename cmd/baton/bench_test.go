package main

// Start-up and memory benchmarks of the real binary (DESIGN: cold start to
// first 200 ≤ 100 ms, idle RSS ≤ 40 MB). They measure and report; they
// never assert timings.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBaton builds the binary into a folder that lives as long as b. It
// keeps the go command's default flags (unlike `make build`, without
// CGO_ENABLED=0 and -trimpath) so that it links the packages the test
// build has just compiled instead of compiling everything again; the
// dynamically linked result starts no faster than the static one.
func buildBaton(b *testing.B) string {
	b.Helper()
	if runtime.GOOS != "linux" {
		b.Skip("start-up benchmarks read /proc and signal processes: Linux only")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command on PATH to build the binary with")
	}
	bin := filepath.Join(b.TempDir(), "baton")
	cmd := exec.Command(goBin, "build", "-ldflags", "-s -w", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// batonProcess is a running `baton serve`.
type batonProcess struct {
	cmd     *exec.Cmd
	url     string
	client  *http.Client
	logs    chan struct{} // closed when stderr reaches EOF
	stopped bool
}

// startBaton starts bin on a free loopback port with a fresh database in
// dir and returns once it has logged "baton ready".
func startBaton(b *testing.B, bin, dir string) *batonProcess {
	b.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "baton.db"))
	cmd.Env = []string{"BATON_PROVIDER=offline", "BATON_LOG_LEVEL=info", "HOME=" + dir}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &batonProcess{cmd: cmd, client: &http.Client{Timeout: 5 * time.Second}, logs: make(chan struct{})}
	// A benchmark that fails half-way must not leave the server running.
	b.Cleanup(func() {
		if !p.stopped {
			cmd.Process.Kill()
			<-p.logs
			cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	var early bytes.Buffer // what it said before it was ready, for failures
	go func() {
		defer close(p.logs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if url, ok := readyURL(line); ok {
				ready <- url
				break
			}
			early.WriteString(line + "\n")
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case p.url = <-ready:
	case <-p.logs:
		b.Fatalf("baton exited before it was ready:\n%s", early.String())
	case <-time.After(10 * time.Second):
		b.Fatal("baton did not log \"baton ready\" within 10s")
	}
	return p
}

// readyURL finds url=… in the "baton ready" log line.
func readyURL(line string) (string, bool) {
	if !strings.Contains(line, `msg="baton ready"`) {
		return "", false
	}
	for f := range strings.FieldsSeq(line) {
		if u, ok := strings.CutPrefix(f, "url="); ok {
			return strings.Trim(u, `"`), true
		}
	}
	return "", false
}

// waitHealthy polls /healthz until it answers 200.
func (p *batonProcess) waitHealthy(b *testing.B) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := p.client.Get(p.url + "/healthz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("GET /healthz: no 200 within 10s (last error: %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// stop sends SIGTERM and waits for the process to exit.
func (p *batonProcess) stop(b *testing.B) {
	b.Helper()
	p.client.CloseIdleConnections()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		b.Fatal(err)
	}
	select {
	case <-p.logs:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.logs
	}
	p.stopped = true
	if err := p.cmd.Wait(); err != nil {
		b.Errorf("baton exited with %v after SIGTERM", err)
	}
}

// rssMB reads the process's resident set size from /proc.
func (p *batonProcess) rssMB(b *testing.B) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatalf("VmRSS: %v", err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS in /proc/PID/status")
	return 0
}

// BenchmarkColdStart is the time from starting the binary, with a new
// database (so migrations run), to its first 200 on /healthz (ms/start),
// and to its "baton ready" log line (package initialisation, opening and
// migrating the database, building the server).
func BenchmarkColdStart(b *testing.B) {
	bin := buildBaton(b)
	b.Run("serve", func(b *testing.B) {
		var toLog, total time.Duration
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			start := time.Now()
			p := startBaton(b, bin, dir)
			toLog += time.Since(start)
			p.waitHealthy(b)
			total += time.Since(start)
			b.StopTimer()
			p.stop(b)
			b.StartTimer()
		}
		b.ReportMetric(ms(total)/float64(b.N), "ms/start")
		b.ReportMetric(ms(toLog)/float64(b.N), "ms-to-ready-log/start")
	})
}

// BenchmarkIdleRSS is the resident memory of the binary after start-up and
// a little use (a thread with a few messages answered by the offline
// provider, its page and assets), once it has sat idle for a second.
func BenchmarkIdleRSS(b *testing.B) {
	bin := buildBaton(b)
	b.Run("serve", func(b *testing.B) {
		var total float64
		for b.Loop() {
			dir := b.TempDir()
			token := benchAccount(b, dir)
			p := startBaton(b, bin, dir)
			p.waitHealthy(b)
			exercise(b, p, token)
			time.Sleep(time.Second)
			total += p.rssMB(b)
			p.stop(b)
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(total/float64(b.N), "MB-RSS")
	})
}

// benchAccount makes the owner Ana in the database in dir, with the CLI,
// and returns a write token of hers.
func benchAccount(b *testing.B, dir string) string {
	b.Helper()
	db := filepath.Join(dir, "baton.db")
	ctx := context.Background()
	if err := run(ctx, []string{"user", "add", "--db", db, "--email", "ana@example.com", "--name", "Ana"}, env(),
		strings.NewReader("correct horse battery\n"), io.Discard, io.Discard); err != nil {
		b.Fatalf("user add: %v", err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--db", db, "--email", "ana@example.com", "--scope", "write"}, env(),
		strings.NewReader(""), &out, io.Discard); err != nil {
		b.Fatalf("token create: %v", err)
	}
	return strings.TrimSpace(out.String())
}

// exercise uses the app as a person would for a minute: a thread, a few
// messages with replies through the API (with token), then signed in, the
// thread page and the home page.
func exercise(b *testing.B, p *batonProcess, token string) {
	b.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	client := *p.client
	client.Jar = jar
	// The client asks for gzip and inflates, as browsers do.
	send := func(method, path, body string) string {
		req, _ := http.NewRequest(method, p.url+path, strings.NewReader(body))
		switch {
		case strings.HasPrefix(path, "/api/"):
			req.Header.Set("Authorization", "Bearer "+token)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
		case method == http.MethodPost:
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			b.Fatalf("%s %s: status %d: %s", method, path, res.StatusCode, data)
		}
		return string(data)
	}
	created := send(http.MethodPost, "/api/v1/threads", `{"title":"JWT migration"}`)
	_, rest, ok := strings.Cut(created, `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	if !ok || id == "" {
		b.Fatalf("POST /api/v1/threads: no id in %s", created)
	}
	for i := range 5 {
		send(http.MethodPost, "/api/v1/threads/"+id+"/messages",
			fmt.Sprintf(`{"content":"Turn %d: move sessions to JWTs in `+"`server/src/routes/auth.ts`"+`; refresh tokens in an HttpOnly cookie?"}`, i))
	}
	send(http.MethodPost, "/login", url.Values{"email": {"ana@example.com"}, "password": {"correct horse battery"}}.Encode())
	if page := send(http.MethodGet, "/t/"+id, ""); !strings.Contains(page, "JWT migration") {
		b.Fatalf("GET /t/%s: not the thread page (not signed in?)", id)
	}
	send(http.MethodGet, "/", "")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
