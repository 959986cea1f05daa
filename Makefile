# Formward: build, run, test and benchmark the one binary.
#
#   make run    build bin/formward and start it in the embedded mode (SQLite under ./data)
#   make test   every test, the PostgreSQL ones and the deployment checks included
#   make bench  the capture-path load benchmark on SQLite and PostgreSQL
#   make bench-public  the public page (GET /f/{id}) and its urlencoded capture beside the API capture, on SQLite,
#                      for a one-page form and for the same fields on three pages with display rules
#   make bench-dashboard  every signed-in dashboard page with 16 signed-in people at once, p50/p99 per page,
#                         on SQLite and (with FORMWARD_TEST_POSTGRES_URL) PostgreSQL
#   make bench-responses  the responses table of a form with 1,000,000 submissions: page 1 and page 10,000
#                         (its keyset cursor), p50/p99 each, on SQLite and PostgreSQL
#   make render-manifests  deployments/kubernetes/formward.yaml from the Helm chart (values-scaled.yaml)
#   make check-deployments the chart (lint, render, strict decode), compose files and systemd unit, offline
#                          (deployments/ is a Go module of its own: the Helm, Kubernetes and compose
#                          libraries stay out of the product's go.mod)

GO ?= go
BIN ?= bin/formward
PKG := github.com/formward/formward
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(PKG)/bootstrap.Version=$(VERSION)

# Tests reach PostgreSQL through this admin URL and create their own throwaway databases.
FORMWARD_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export FORMWARD_TEST_POSTGRES_URL

# The race detector is on: the whole suite stays around a minute on two cores once built.
# `make test RACE=` runs without it.
RACE ?= -race
TEST_TIMEOUT ?= 20m
TEST_FLAGS ?=

WIRE_VERSION := v0.7.0
GOBIN_DIR := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
WIRE := $(GOBIN_DIR)/wire
# The S3 object store's contract test runs against a real MinIO server built from source, at a
# pinned version (a moving @latest would change under CI; the first build takes ~14 minutes).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := $(GOBIN_DIR)/minio

.PHONY: all build run test tools bench bench-public bench-dashboard bench-responses generate lint clean render-manifests check-deployments

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

run: build
	./$(BIN) serve

# tools installs the test servers that are not Go modules of this repository (several minutes
# the first time: MinIO builds from source).
tools:
	@command -v minio >/dev/null 2>&1 || test -x $(MINIO) || $(GO) install github.com/minio/minio@$(MINIO_VERSION)

# The deployment checks are a Go module of their own (deployments/go.mod), so ./... of the
# product leaves them out: they run second, without the race detector (they check files and
# the binary's --help).
test: tools
	$(GO) test -count=1 $(RACE) -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...
	cd deployments && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

bench:
	bash test/load/bench.sh

bench-public:
	BENCH_FORM=single BENCH_DBS=sqlite BENCH_MODES="api page capture capture-notoken" bash test/load/bench.sh
	BENCH_FORM=multipage BENCH_DBS=sqlite BENCH_MODES="page capture capture-notoken" bash test/load/bench.sh

bench-dashboard:
	FORMWARD_BENCH_DASHBOARD=1 $(GO) test ./adapters/dashboard -run '^TestDashboardLoad$$' -count=1 -v -timeout 10m

bench-responses:
	FORMWARD_BENCH_RESPONSES=1 $(GO) test ./adapters/dashboard -run '^TestResponsesTableLoad$$' -count=1 -v -timeout 60m

generate:
	@test -x $(WIRE) || $(GO) install github.com/google/wire/cmd/wire@$(WIRE_VERSION)
	PATH="$(GOBIN_DIR):$$PATH" $(GO) generate ./...
	$(WIRE) gen ./bootstrap

lint:
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './vendor/*' -not -path './.git/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd deployments && $(GO) vet ./...
	cd examples/custom-build && $(GO) vet ./...

# The plain Kubernetes manifests are the Helm chart rendered (by the Helm library, in the
# deployments test): no helm binary is needed. The same test fails when they are out of date.
render-manifests:
	cd deployments && FORMWARD_UPDATE_MANIFESTS=1 $(GO) test -count=1 -run 'TestPlainManifests$$' .

check-deployments:
	cd deployments && $(GO) test -count=1 ./...

clean:
	rm -rf bin
