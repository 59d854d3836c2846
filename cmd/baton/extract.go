package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/baton-dev/baton/agent"
)

// exitCodeError is an error that asks main to exit with code.
type exitCodeError struct {
	code     int
	err      error
	reported bool // already printed on stderr (usage errors, bad input)
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }

// extractInput is the file runExtract reads; other keys are ignored.
type extractInput struct {
	Messages *[]struct {
		Role    *agent.Role `json:"role"`
		Content *string     `json:"content"`
	} `json:"messages"`
}

// runExtract implements `baton extract [--provider P] FILE`: it reads a JSON
// object with a "messages" array of {role, content} from FILE ("-" for
// stdin), extracts decisions, files, risks and a summary with the extractor
// newExtractor returns for provider P (default "offline"), and prints the extraction as
// indented JSON on stdout. Bad input is reported on stderr and returned as an
// *exitCodeError with code 1; usage errors use code 2.
func runExtract(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, newExtractor func(name string) (agent.Extractor, error)) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	providerName := fs.String("provider", "", "provider to extract with: offline, anthropic or openai (default: BATON_PROVIDER, else offline)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: baton extract [--provider P] FILE\n\nFILE is a JSON object with a \"messages\" array of {role, content}; - reads stdin.")
		fs.PrintDefaults()
	}
	fail := func(code int, format string, a ...any) error {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(stderr, "baton extract:", err)
		return &exitCodeError{code: code, err: err, reported: true}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitCodeError{code: 2, err: err, reported: true}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitCodeError{code: 2, err: errors.New("extract: want exactly one FILE"), reported: true}
	}
	name := fs.Arg(0)

	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return fail(1, "read %s: %v", name, err)
	}
	var in extractInput
	if err := json.Unmarshal(data, &in); err != nil {
		return fail(1, "%s is not a JSON object: %v", name, err)
	}
	if in.Messages == nil {
		return fail(1, "%s has no \"messages\" array", name)
	}
	msgs := make([]agent.TranscriptMessage, 0, len(*in.Messages))
	for i, m := range *in.Messages {
		if m.Role == nil || (*m.Role != agent.RoleUser && *m.Role != agent.RoleAssistant) {
			return fail(1, "%s: messages[%d]: role must be \"user\" or \"assistant\"", name, i)
		}
		if m.Content == nil {
			return fail(1, "%s: messages[%d]: content is missing", name, i)
		}
		msgs = append(msgs, agent.TranscriptMessage{Role: *m.Role, Content: *m.Content})
	}

	extractor, err := newExtractor(*providerName)
	if err != nil {
		return fail(1, "provider %q: %v", *providerName, err)
	}
	x, err := agent.Extract(ctx, extractor, msgs)
	if err != nil {
		return fail(1, "%v", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		return fmt.Errorf("extract: write output: %w", err)
	}
	return nil
}
