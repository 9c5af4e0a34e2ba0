#!/usr/bin/env bash
# Idempotent set-up of everything `make build` / `make test` need, for a fresh Debian 12 machine of this
# project's kind (root, only package registries reachable). Each step checks the installed version first,
# so a second run is a fast no-op. One line per step. Pins live in scripts/env.sh.
#
#   rustup target wasm32-unknown-unknown (+ rustfmt, clippy)
#   wasm-bindgen-cli =0.2.130  (cargo install, unlocked: --locked fails on this registry)
#   wasm-pack 0.15.1           (cargo install --locked)
#   Node 24 + binaryen 132     (npm, into .tools/; Debian's binaryen 108 is broken, never use it)
#   geckodriver 0.37.1         (cargo install --locked; npm's `geckodriver` downloads a binary at install)
#   chromium + chromium-driver, firefox-esr, webkit2gtk-driver (WebKitWebDriver + MiniBrowser), xvfb,
#   redis-server               (apt; `apt-get update` only when something is missing)
#   root dev dependencies      (npm ci, skipped while package-lock.json is unchanged)
#
#   scripts/bootstrap.sh demo  only what `make demo` needs (issue 15: a brand-new machine in < 5 min):
#                              the Rust target, wasm-bindgen-cli, Node 24 + wasm-opt; no wasm-pack,
#                              browsers, redis or dev dependencies (`make test`/`make setup` install them).
set -euo pipefail
MODE="${1:-all}"
case "$MODE" in all | demo) ;; *) echo "bootstrap: unknown mode '$MODE' (all | demo)" >&2; exit 2 ;; esac
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

T0=$SECONDS
say() { printf 'bootstrap: %-22s %s\n' "$1" "$2"; }
took() { echo "installed in $((SECONDS - $1))s"; }

need_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

APT_UPDATED=0
apt_install() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    need_root apt-get update -qq >/dev/null
    APT_UPDATED=1
  fi
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# --- Rust ---------------------------------------------------------------------------------------------
command -v cargo >/dev/null || { echo "bootstrap: cargo/rustup not found; install Rust first" >&2; exit 1; }
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "wasm32 target" "ok"
else
  t=$SECONDS; rustup target add wasm32-unknown-unknown >/dev/null 2>&1; say "wasm32 target" "$(took "$t")"
fi
if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
  say "rustfmt, clippy" "ok"
else
  t=$SECONDS; rustup component add rustfmt clippy >/dev/null 2>&1; say "rustfmt, clippy" "$(took "$t")"
fi

# wasm-bindgen-cli must match the crate's `wasm-bindgen = "=0.2.130"` exactly.
if [ "$(wasm-bindgen --version 2>/dev/null || true)" = "wasm-bindgen $STEADFAST_WASM_BINDGEN" ] \
  && command -v wasm-bindgen-test-runner >/dev/null; then
  say "wasm-bindgen-cli" "$STEADFAST_WASM_BINDGEN ok"
else
  t=$SECONDS
  # The demo skips the default rustls feature (TLS for the test runner's downloads; ring's C build is
  # a third of the compile): 157 s instead of 238 s on a fresh machine. Both talk plain HTTP to a local
  # chromedriver, so `make test` works with either.
  features=(); [ "$MODE" = demo ] && features=(--no-default-features)
  cargo install --quiet --force "${features[@]}" wasm-bindgen-cli --version "$STEADFAST_WASM_BINDGEN"
  say "wasm-bindgen-cli" "$STEADFAST_WASM_BINDGEN $(took "$t")"
fi

if [ "$MODE" = demo ]; then
  say "wasm-pack" "skipped (demo)"
elif [ "$(wasm-pack --version 2>/dev/null || true)" = "wasm-pack $STEADFAST_WASM_PACK" ]; then
  say "wasm-pack" "$STEADFAST_WASM_PACK ok"
else
  t=$SECONDS
  cargo install --quiet --force --locked wasm-pack --version "$STEADFAST_WASM_PACK"
  say "wasm-pack" "$STEADFAST_WASM_PACK $(took "$t")"
fi

# geckodriver drives Firefox for wasm-pack --firefox and the WebDriver page suites.
if [ "$MODE" = demo ]; then
  say "geckodriver" "skipped (demo)"
elif [ "$(geckodriver --version 2>/dev/null | head -n 1 | awk '{print $2}')" = "$STEADFAST_GECKODRIVER_VERSION" ]; then
  say "geckodriver" "$STEADFAST_GECKODRIVER_VERSION ok"
else
  t=$SECONDS
  cargo install --quiet --force --locked geckodriver --version "$STEADFAST_GECKODRIVER_VERSION"
  say "geckodriver" "$STEADFAST_GECKODRIVER_VERSION $(took "$t")"
fi

# --- Node 24 and wasm-opt, project-local ---------------------------------------------------------------
if ! command -v npm >/dev/null; then
  t=$SECONDS; apt_install nodejs npm; say "system npm" "$(took "$t")"
fi
node_ok() { [ -x "$STEADFAST_NODE" ] && "$STEADFAST_NODE" --version 2>/dev/null | grep -q "^v$STEADFAST_NODE_MAJOR\."; }
wasm_opt_ok() { [ -x "$STEADFAST_WASM_OPT" ] && "$STEADFAST_WASM_OPT" --version 2>/dev/null | grep -q "version $STEADFAST_BINARYEN\b"; }
if node_ok && wasm_opt_ok; then
  say "node, wasm-opt" "$("$STEADFAST_NODE" --version), binaryen $STEADFAST_BINARYEN ok"
else
  t=$SECONDS
  mkdir -p "$STEADFAST_TOOLS"
  # Both in one command: npm prunes what is not in the one install it is doing.
  npm install --prefix "$STEADFAST_TOOLS" --no-audit --no-fund --loglevel=error \
    "$STEADFAST_NODE_PKG@$STEADFAST_NODE_MAJOR" "binaryen@$STEADFAST_BINARYEN" >/dev/null
  node_ok || { echo "bootstrap: $STEADFAST_NODE is not Node $STEADFAST_NODE_MAJOR" >&2; exit 1; }
  wasm_opt_ok || { echo "bootstrap: $STEADFAST_WASM_OPT is not binaryen $STEADFAST_BINARYEN" >&2; exit 1; }
  say "node, wasm-opt" "$("$STEADFAST_NODE" --version), binaryen $STEADFAST_BINARYEN $(took "$t")"
fi

if [ "$MODE" = demo ]; then
  say "done" "demo tools in $((SECONDS - T0))s (browsers, redis, dev dependencies: skipped)"
  exit 0
fi

# --- Debian packages: Chromium (+ chromedriver), Firefox ESR and WebKitGTK (WebKitWebDriver, MiniBrowser,
# and Xvfb for it: MiniBrowser has no headless mode) for the browser tests, redis-server for the
# shared-state tests (they start a private one themselves). One `apt-get update` + install, only when one
# is missing.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
[ -x "$STEADFAST_FIREFOX" ] || missing+=(firefox-esr)
{ [ -x "$STEADFAST_WEBKITDRIVER" ] && [ -x "$STEADFAST_MINIBROWSER" ]; } || missing+=(webkit2gtk-driver)
command -v xvfb-run >/dev/null || missing+=(xvfb)
command -v xauth >/dev/null || missing+=(xauth) # xvfb-run needs it; xvfb only recommends it
command -v redis-server >/dev/null || missing+=(redis-server)
if [ "${#missing[@]}" -gt 0 ]; then
  t=$SECONDS; apt_install "${missing[@]}"; say "apt" "${missing[*]} $(took "$t")"
  for f in /usr/lib/*/webkit2gtk-4.1/MiniBrowser; do [ -x "$f" ] && STEADFAST_MINIBROWSER="$f"; done
fi
say "chromium" "$(chromium --version 2>/dev/null | awk '{print $2}') ok"
say "firefox-esr" "$("$STEADFAST_FIREFOX" --version 2>/dev/null | awk '{print $3}') ok"
[ -x "$STEADFAST_MINIBROWSER" ] || { echo "bootstrap: MiniBrowser not found at $STEADFAST_MINIBROWSER" >&2; exit 1; }
say "webkitgtk" "$(dpkg-query -W -f='${Version}' webkit2gtk-driver 2>/dev/null | cut -d- -f1) ok"
say "redis-server" "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') ok"

# --- Root dev dependencies (tests, Vite, TypeScript) ---------------------------------------------------
# Runs only when package.json/package-lock.json changed since the last successful install (stamp file).
# `npm install --no-save`, not `npm ci`: this registry lacks one of vite 8's optional dependencies
# (napi-windows-process-start-time, Windows-only), so the lock cannot list it and `npm ci` refuses the lock
# as out of sync; `npm install` follows the lock, skips the missing optional package, and --no-save keeps
# package-lock.json untouched.
stamp=node_modules/.steadfast-lock.sha256
want="$(sha256sum package.json package-lock.json | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "npm dev dependencies" "ok"
else
  t=$SECONDS
  npm install --no-save --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >"$stamp"
  say "npm dev dependencies" "$(took "$t")"
fi

say "done" "in $((SECONDS - T0))s"
