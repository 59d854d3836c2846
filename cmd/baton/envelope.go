package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
)

const envelopeUsage = `usage: baton envelope <command> [flags]

Commands:
  validate [--db PATH] FILE…             check envelopes (.json, or export .zip files); exit 1 with one line per problem
  export (--handoff ID | --plan ID) [-o DIR] [--db PATH]
                                         write an export: documents/handoffs/handoff_….json and its artifacts under DIR
  import [--db PATH] FILE                import a brainstorm_handoff envelope (.json or export .zip) as a draft handoff

The JSON Schema is store/envelope/handoff-envelope-1.0.json, served at /schemas/handoff-envelope-1.0.json.`

// runEnvelope implements baton envelope validate|export|import.
func runEnvelope(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, envelopeUsage)
		if len(args) == 0 {
			return &exitCodeError{code: 2, err: errors.New("envelope: say which command"), reported: true}
		}
		return nil
	}
	var cfg config
	cfg.fromEnv(getenv)
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("envelope "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DB, "db", cfg.DB, dbUsage)
	usageErr := func(format string, a ...any) error {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "baton envelope %s: %s\n\n%s\n", cmd, err, envelopeUsage)
		return &exitCodeError{code: 2, err: err, reported: true}
	}
	parse := func() error {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return &exitCodeError{code: 0, err: err, reported: true}
			}
			return &exitCodeError{code: 2, err: err, reported: true}
		}
		return nil
	}
	switch cmd {
	case "validate":
		if err := parse(); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return usageErr("name at least one FILE")
		}
		return runEnvelopeValidate(ctx, &cfg, fs.Args(), stdout, stderr)
	case "export":
		handoffID := fs.String("handoff", "", "export the latest snapshot of this handoff")
		planID := fs.String("plan", "", "export this plan (or its error envelope)")
		dir := fs.String("o", ".", "folder to write the export under")
		if err := parse(); err != nil {
			return err
		}
		if (*handoffID == "") == (*planID == "") || fs.NArg() > 0 {
			return usageErr("give --handoff ID or --plan ID, and no other arguments")
		}
		return runEnvelopeExport(ctx, &cfg, *handoffID, *planID, *dir, stdout)
	case "import":
		if err := parse(); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageErr("name exactly one FILE")
		}
		return runEnvelopeImport(ctx, &cfg, fs.Arg(0), stdout, stderr)
	}
	return usageErr("unknown command %q", cmd)
}

// envelopeFile is an envelope read from a file, with the files beside it
// (its bundle).
type envelopeFile struct {
	name   string // for messages: the file, or zip:entry
	data   []byte
	bundle func(path string) bool
}

// readEnvelopes reads the envelopes of a .json file (its bundle is the
// export folder it sits in: the folder above documents/handoffs/, else its
// own) or of an export .zip (its bundle is the zip).
func readEnvelopes(name string) ([]envelopeFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(name), ".zip") {
		envs, files, err := envelope.ReadZip(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(envs) == 0 {
			return nil, fmt.Errorf("%s: no envelope under %s/", name, envelope.HandoffsDir)
		}
		var out []envelopeFile
		for entry, data := range envs {
			out = append(out, envelopeFile{name: name + ":" + entry, data: data, bundle: func(p string) bool { return files[p] }})
		}
		slices.SortFunc(out, func(a, b envelopeFile) int { return strings.Compare(a.name, b.name) })
		return out, nil
	}
	root := filepath.Dir(name)
	if abs, err := filepath.Abs(root); err == nil && strings.HasSuffix(filepath.ToSlash(abs), "/"+envelope.HandoffsDir) {
		root = filepath.Dir(filepath.Dir(root))
	}
	bundle := func(p string) bool {
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil && fi.Mode().IsRegular()
	}
	return []envelopeFile{{name: name, data: data, bundle: bundle}}, nil
}

// openExisting opens the configured database if there is one: validation
// looks snapshots and plans up in it, but never creates a SQLite file.
func openExisting(ctx context.Context, cfg *config) (*store.DB, error) {
	if _, err := os.Stat(cfg.DB); err != nil && !store.IsPostgresURL(cfg.DB) {
		return nil, nil
	}
	return cfg.openDB(ctx)
}

// runEnvelopeValidate prints one line per problem ("FILE: path: message")
// and returns exit code 1 if there was any, or a file could not be read.
func runEnvelopeValidate(ctx context.Context, cfg *config, names []string, stdout, stderr io.Writer) error {
	db, err := openExisting(ctx, cfg)
	if err != nil {
		return err
	}
	var opts envelope.Options
	if db != nil {
		defer db.Close()
		opts = envelope.StoreOptions(ctx, db)
	}
	bad := 0
	for _, name := range names {
		files, err := readEnvelopes(name)
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", name, err)
			bad++
			continue
		}
		for _, f := range files {
			opts.Bundle = f.bundle
			e, ps := envelope.Check(f.data, opts)
			for _, p := range ps {
				fmt.Fprintf(stdout, "%s: %s\n", f.name, p)
			}
			if len(ps) > 0 {
				bad++
				continue
			}
			fmt.Fprintf(stderr, "%s: valid %s\n", f.name, e)
		}
	}
	if bad > 0 {
		return &exitCodeError{code: 1, err: fmt.Errorf("%d of the envelopes are not valid", bad), reported: true}
	}
	return nil
}

// runEnvelopeExport writes an export's files under dir and prints their paths.
func runEnvelopeExport(ctx context.Context, cfg *config, handoffID, planID, dir string, stdout io.Writer) error {
	db, err := cfg.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	var b *envelope.Bundle
	if handoffID != "" {
		b, err = envelope.ExportHandoff(ctx, db, handoffID)
	} else {
		b, err = envelope.ExportPlan(ctx, db, planID)
	}
	if err != nil {
		return err
	}
	files := map[string][]byte{envelope.FileName(b.Envelope): b.JSON}
	for p, data := range b.Files {
		files[p] = data
	}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[p], 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, path)
	}
	return nil
}

// runEnvelopeImport imports the envelopes of a file and prints what each made.
func runEnvelopeImport(ctx context.Context, cfg *config, name string, stdout, stderr io.Writer) error {
	files, err := readEnvelopes(name)
	if err != nil {
		return err
	}
	db, err := cfg.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	bad := 0
	for _, f := range files {
		imp, ps, err := envelope.Import(ctx, db, "", f.data, envelope.Options{Bundle: f.bundle})
		switch {
		case len(ps) > 0:
			for _, p := range ps {
				fmt.Fprintf(stderr, "%s: %s\n", f.name, p)
			}
			bad++
		case err != nil:
			fmt.Fprintf(stderr, "%s: %s\n", f.name, store.ErrorMessage(err))
			bad++
		case imp.Kind == envelope.KindAgentHandoff && imp.Created:
			fmt.Fprintf(stdout, "%s: imported as agent handoff %s (see it at /agents/handoffs/%s)\n", f.name, imp.HandoffID, imp.HandoffID)
		case imp.Kind == envelope.KindAgentHandoff:
			fmt.Fprintf(stdout, "%s: already imported as agent handoff %s; nothing new\n", f.name, imp.HandoffID)
		case imp.Created:
			fmt.Fprintf(stdout, "%s: imported as draft handoff %s (review it at /h/%s)\n", f.name, imp.HandoffID, imp.HandoffID)
		default:
			fmt.Fprintf(stdout, "%s: already imported as handoff %s; nothing new\n", f.name, imp.HandoffID)
		}
	}
	if bad > 0 {
		return &exitCodeError{code: 1, err: fmt.Errorf("%d of the envelopes were not imported", bad), reported: true}
	}
	return nil
}
