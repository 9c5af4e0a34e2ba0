#!/usr/bin/env bash
# Everything `make test` (and so CI's .ci/run) checks, in order, stopping at the first failure:
#
#   fmt          cargo fmt --check
#   lint-js      prettier --check and eslint on the JS files scripts/lint-js.sh covers
#   lint-docs    no process words (issue numbers, commit ids, …) in what users read (scripts/lint-docs.mjs)
#   docs         the API reference from the declarations by TypeDoc, failing on any warning (scripts/docs.sh)
#   clippy       cargo clippy --all-targets -D warnings (native) and --target wasm32 --lib
#   native       cargo test (the pure core, natively)
#   wasm-web     the async Rust API (feature `web`; run last): natively on a virtual clock, then inside
#                wasm in Node, headless Chromium and a Chromium dedicated worker, with a local HTTP
#                server (scripts/test-wasm-web.sh)
#   build        scripts/build.sh → pkg/ and dist/steadfast-*.tgz
#   wasm-node    wasm-bindgen-test suites (tests/wasm/) in Node 24         ─┐
#   wasm-chrome  the same suites in headless Chromium                       │ scripts/test-wasm.sh; each fails
#   wasm-firefox the same suites in headless Firefox ESR (geckodriver)      │ if it ran zero tests
#   wasm-webkit  the same suites in WebKitGTK's MiniBrowser (Xvfb)         ─┘
#   js           node --test tests/js/*.test.mjs against the packed package, by name   (scripts/test-js.sh)
#   consumers    tests/consumers/*.sh, tests/consumers/*/run.sh                        (scripts/test-consumers.sh)
#   package-lint publint --strict and @arethetypeswrong/cli on the tarball      (scripts/test-runtimes.sh lint)
#   runtimes     one program from the tarball in Deno, Bun (+ --compile), workerd (wrangler dev) and a
#                Next.js app (Turbopack and webpack; page in Chromium, Node and edge routes); installs
#                the runtimes into .tools/runtimes on first use                  (scripts/test-runtimes.sh run)
#   browser-chromium  tests/browser/*.test.mjs in Chromium (Playwright)  ─┐ scripts/test-browser.sh <engine>;
#   browser-firefox   the cross-engine suites in Firefox (WebDriver)      │ each fails if it ran zero cases
#   browser-webkit    the cross-engine suites in WebKit (WebDriver, Xvfb)─┘ (`browser` = all three)
#
# `scripts/test.sh` runs all; `scripts/test.sh js browser` runs only those steps (they need a build).
# Tools come from `make setup` (scripts/bootstrap.sh); `make test` runs it first.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

ALL=(fmt lint-js lint-docs docs clippy native build wasm-node wasm-chrome wasm-firefox wasm-webkit js consumers
  package-lint runtimes browser-chromium browser-firefox browser-webkit)
steps=("$@")
ALL+=(wasm-web)
[ "${#steps[@]}" -gt 0 ] || steps=("${ALL[@]}")

run_step() {
  case "$1" in
    fmt)
      cargo fmt --all --check
      cargo fmt --manifest-path examples/rust-checkout/Cargo.toml --check
      cargo fmt --manifest-path examples/rust-checkout/baseline/Cargo.toml --check
      ;;
    lint-js) scripts/lint-js.sh ;;
    lint-docs) node scripts/lint-docs.mjs ;;
    docs) scripts/docs.sh ;;
    clippy)
      cargo clippy --quiet --all-targets -- -D warnings
      cargo clippy --quiet --target wasm32-unknown-unknown --lib -- -D warnings
      cargo clippy --quiet --target wasm32-unknown-unknown --lib --features sim --target-dir target/sim -- -D warnings
      cargo clippy --quiet --all-targets --features web -- -D warnings
      cargo clippy --quiet --target wasm32-unknown-unknown --lib --tests --features web -- -D warnings
      cargo clippy --quiet --target wasm32-unknown-unknown --lib --no-default-features --features web -- -D warnings
      ;;
    native) cargo test ;;
    wasm-web)
      cargo test --features web --test web_native
      cargo test --features web --doc
      scripts/test-wasm-web.sh all
      ;;
    build) scripts/build.sh ;;
    wasm-node) scripts/test-wasm.sh node ;;
    wasm-chrome) scripts/test-wasm.sh chrome ;;
    wasm-firefox) scripts/test-wasm.sh firefox ;;
    wasm-webkit) scripts/test-wasm.sh webkit ;;
    js) scripts/test-js.sh ;;
    consumers) scripts/test-consumers.sh ;;
    package-lint) scripts/test-runtimes.sh lint ;;
    runtimes) scripts/test-runtimes.sh run ;;
    browser) scripts/test-browser.sh ;;
    browser-chromium) scripts/test-browser.sh chromium ;;
    browser-firefox) scripts/test-browser.sh firefox ;;
    browser-webkit) scripts/test-browser.sh webkit ;;
    *) echo "test: unknown step '$1' (steps: ${ALL[*]} browser)" >&2; return 2 ;;
  esac
}

T0=$SECONDS
summary=()
for step in "${steps[@]}"; do
  echo "━━ test: $step"
  t=$SECONDS
  # Not `if ! run_step`: bash ignores `set -e` inside a function called as a condition, so a step of
  # several commands (fmt, clippy, wasm-web) would pass whenever its LAST command did. A subshell
  # with -e of its own stops at the first failing command; its status is the step's.
  set +e
  (
    set -e
    run_step "$step"
  )
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "━━ test: step '$step' FAILED after $((SECONDS - t))s" >&2
    exit 1
  fi
  summary+=("$step $((SECONDS - t))s")
done
joined="$(printf '%s, ' "${summary[@]}")"
echo "━━ test: all ${#steps[@]} steps ok in $((SECONDS - T0))s (${joined%, })"
