# Baton. `make run` serves on http://localhost:8080 with the offline
# provider; `make test` runs everything CI checks.
GO      ?= go
ADDR    ?= 127.0.0.1:8080
DB      ?= data/baton.db
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
EVAL    ?= ../shared/eval

.PHONY: run build test generate check-generate lint vet fmt-check staticcheck unit bench eval clean

run: build ## build bin/baton, then serve on $(ADDR) with the offline provider (or BATON_PROVIDER) and $(DB)
	@echo "Starting Baton on http://$(ADDR) (database $(DB)); Ctrl+C stops it."
	bin/baton serve --addr $(ADDR) --db $(DB)

build: ## build bin/baton
	@echo "Building bin/baton (the first build downloads and compiles the dependencies: a few minutes)…"
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/baton ./cmd/baton

test: check-generate lint unit ## everything CI checks

generate: ## regenerate templ code and the envelope's JSON Schema
	$(GO) tool templ generate
	$(GO) generate ./store/envelope

check-generate: ## fail if templ generate or the schema generator would change committed files
	$(GO) tool templ generate
	$(GO) generate ./store/envelope
	@git diff --exit-code -- '*_templ.go' store/envelope/handoff-envelope-1.0.json || { echo "make generate changed files: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard -- '*_templ.go' store/envelope/handoff-envelope-1.0.json)" || { echo "untracked generated files: commit them"; exit 1; }

lint: fmt-check vet staticcheck ## gofmt, go vet, staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

unit: ## all tests with the race detector, the browser tests included; then the store, agent, web and cmd tests again on PostgreSQL
	$(GO) test -race -count=1 -timeout 15m ./...
	BATON_TEST_DB=postgres $(GO) test -race -count=1 -timeout 15m ./store/... ./agent/ ./web/ ./cmd/...

bench: ## benchmarks (render, extraction, server throughput, start-up, memory)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./...

OWN_EVAL ?= agent/offline/testdata/eval
EVAL_PROVIDER ?= offline

# eval extracts every case with EVAL_PROVIDER into bin/eval/PROVIDER/SET/ and
# scores them into SET.txt beside it, both kept for reading. A case whose
# extraction fails says why and scores zero. There is no time limit per case:
# a model on a CPU may take minutes.
eval: ## score an extractor (EVAL_PROVIDER, default offline) on the dev set and on its own set
	$(GO) build -o bin/baton ./cmd/baton
	@for set in $(EVAL)/dev $(OWN_EVAL); do \
		out=bin/eval/$(EVAL_PROVIDER)/$$(basename $$set); rm -rf $$out; mkdir -p $$out; \
		for f in $$set/*.json; do \
			bin/baton extract --provider $(EVAL_PROVIDER) $$f > $$out/$$(basename $$f) \
				|| { echo "  ($$(basename $$f) failed)"; rm -f $$out/$$(basename $$f); }; \
		done; \
		echo "== $$set ($(EVAL_PROVIDER))"; python3 $(EVAL)/score.py $$set --predictions $$out > $$out.txt; tail -1 $$out.txt; \
	done

clean:
	rm -rf bin data/baton.db data/baton.db-wal data/baton.db-shm
