# steadfast: the README's commands. Recipes are thin; the work is in scripts/ (each sources scripts/env.sh,
# which puts Node 24 and npm's wasm-opt from .tools/ first on PATH).
#
#   make setup   install/check every tool (idempotent; a no-op in well under a second when all is there)
#   make build   Rust → wasm → pkg/ → dist/steadfast-<version>.tgz, with a size table
#   make test    setup, then fmt, lint-js, clippy, native tests, build, wasm tests (Node, Chromium, Firefox,
#                WebKit), JS, consumers, package lint, runtimes (Deno, Bun, workerd, Next.js), browser (Chromium,
#                Firefox, WebKit), Rust web API — what CI runs (.ci/run)
#   make demo    the demo's tools only (bootstrap.sh demo: no wasm-pack/browsers/redis), build, node examples/demo.mjs
#   make bench   setup, build, node benches/run.mjs --write-docs (its tables into docs/performance.md)
#   make docs    the API reference from the declarations (TypeDoc) into target/api/, and the process-word lint
#   make fmt     cargo fmt          make lint   cargo fmt --check + prettier/eslint + clippy (native and wasm32)
#   make test-native | test-wasm | test-wasm-web | test-js | test-consumers | test-runtimes | test-browser   one part of `make test`
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build
ENV := . scripts/env.sh &&

.PHONY: setup build test demo bench docs fmt lint test-native test-wasm test-wasm-web test-js test-consumers test-runtimes test-browser clean soak

setup:
	@scripts/bootstrap.sh

build: setup
	@scripts/build.sh

test: setup
	@scripts/test.sh

# Not `demo: build`: a brand-new machine must not compile wasm-pack or fetch browsers for the demo.
demo:
	@scripts/bootstrap.sh demo
	@scripts/build.sh
	@$(ENV) scripts/install-tarball.sh examples >/dev/null && node examples/demo.mjs

bench: build
	@$(ENV) node benches/run.mjs --write-docs

docs: setup
	@scripts/test.sh lint-docs docs

fmt:
	@$(ENV) cargo fmt --all

lint: setup
	@scripts/test.sh fmt lint-js clippy

test-native: setup
	@scripts/test.sh native

test-wasm: setup
	@scripts/test.sh wasm-node wasm-chrome wasm-firefox wasm-webkit

test-wasm-web: setup
	@scripts/test.sh wasm-web

test-js: build
	@scripts/test.sh js

test-consumers: build
	@scripts/test.sh consumers

test-runtimes: build
	@scripts/test.sh package-lint runtimes

test-browser: build
	@scripts/test.sh browser

# The long runs: 100,000-charge soak over HTTP (and 1,000 without the settle window), 1,000,000 fuzz
# cases, 100,000-call load x 5 rounds, 1,000,000 unknown records listed from Redis; their figures are
# written into docs/guarantees.md (tests/soak/all.mjs).
soak: build
	@scripts/install-tarball.sh >/dev/null
	@$(ENV) node tests/soak/all.mjs --write-docs

clean:
	@$(ENV) cargo clean && rm -rf pkg dist tests/.out tests/node_modules
