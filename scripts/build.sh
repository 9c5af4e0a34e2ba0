#!/usr/bin/env bash
# The one build (`make build`): Rust → wasm → wasm-bindgen (--target web) → panic entry points to traps
# (scripts/wasm-trap-panics.mjs) → wasm-opt → pkg/ → npm pack.
#
#   pkg/   = wasm-bindgen output (steadfast_core.js + _bg.wasm, steadfast_sim.js + _bg.wasm) + all of pkg-template/
#            + LICENSE-MIT, LICENSE-APACHE, CHANGELOG.md, docs/checkout-contract.md; README.md gets its size table
#   dist/steadfast-<version>.tgz = `npm pack` of pkg/, what tests and consumers install
#
# One web-target build serves Node and browsers: pkg-template's init.node.js instantiates it synchronously
# from the file, init.browser.js with `await init()`; package.json's exports pick one by condition.
#
# WASM_OPT_FLAGS overrides the wasm-opt flags. `scripts/build.sh --compare-wasm-opt` builds, then prints
# raw/gzip/brotli for each candidate flag set and whether the result still loads, to re-choose the default.
set -euo pipefail
# shellcheck source=scripts/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$STEADFAST_ROOT"

# Chosen by measurement (scripts/build.sh --compare-wasm-opt); gzip -9 bytes, all variants load:
#   crate at 86.3 KB before wasm-opt:  -O2 27870  -O3 27888  -O4 27936  -Os 27865  -Oz 27823  -Oz --converge 27718
#   crate at 115.6 KB (with sim):      -O2 38751  -O3 38783  -O4 38946  -Os 38584  -Oz 38567  -Oz --converge 38557
# -Oz --converge is the smallest both times (the margin is small); it costs ~1 s more, paid once per change
# thanks to the cache below. Re-run the comparison when the crate changes shape.
# The stripped sections (producers, target_features) are metadata that nothing reads at run time.
WASM_OPT_STRIP="--strip-producers --strip-target-features"
# --low-memory-unused (−216 B gz, issue 15): lets wasm-opt fold constant offsets into loads/stores,
# assuming nothing reads or writes the first 1 KiB. Rust's wasm32 layout puts a 1 MiB stack FIRST
# (__stack_pointer starts at 1048576 and grows down; data and heap start above it), so that KiB is
# touched only by a stack 1023 KiB deep — no code here recurses anywhere near that.
WASM_OPT_FLAGS="${WASM_OPT_FLAGS:--Oz --converge --low-memory-unused $WASM_OPT_STRIP}"
CANDIDATES=("-O2" "-O3" "-O4" "-Os" "-Oz" "-Oz --converge")

T0=$SECONDS
step() { printf 'build: %s\n' "$*"; }

for tool in cargo wasm-bindgen node npm; do
  command -v "$tool" >/dev/null || { echo "build: $tool not found; run 'make setup'" >&2; exit 1; }
done
[ -x "$STEADFAST_WASM_OPT" ] || { echo "build: $STEADFAST_WASM_OPT missing; run 'make setup'" >&2; exit 1; }

# Two modules from one crate: steadfast_core (the package's main entry) and steadfast_sim (the
# `steadfast/sim` entry: the same core plus the retry-storm simulator, cargo feature `sim`). Users who
# only retry and charge do not download the simulator (~10 KB gz). Separate target dirs keep both
# builds incremental.
step "cargo build --release --target wasm32-unknown-unknown --lib (core, and --features sim)"
cargo build --quiet --release --target wasm32-unknown-unknown --lib
cargo build --quiet --release --target wasm32-unknown-unknown --lib --features sim --target-dir target/sim
raw_wasm=target/wasm32-unknown-unknown/release/steadfast.wasm
raw_sim_wasm=target/sim/wasm32-unknown-unknown/release/steadfast.wasm

bindgen=target/steadfast-bindgen
step "wasm-bindgen --target web → $bindgen"
rm -rf "$bindgen"
# --encode-into always: TextEncoder.encodeInto is in every engine the package supports (no fallback
# path); --omit-default-module-path: every loader (init.*.js) passes the .wasm location itself.
# Together −56 B gz of the bundled glue.
BINDGEN_FLAGS=(--target web --encode-into always --omit-default-module-path)
wasm-bindgen "${BINDGEN_FLAGS[@]}" --out-dir "$bindgen" --out-name steadfast_core "$raw_wasm"
wasm-bindgen "${BINDGEN_FLAGS[@]}" --out-dir "$bindgen" --out-name steadfast_sim "$raw_sim_wasm"
# Each glue class as one pure expression, so that a bundle carries only the classes it names
# (scripts/glue-pure.mjs says why and checks the shape it rewrites).
node scripts/glue-pure.mjs "$bindgen/steadfast_core.js" "$bindgen/steadfast_sim.js"
# Without the glue this package never reaches (scripts/glue-trim.mjs says what and checks each cut).
node scripts/glue-trim.mjs "$bindgen/steadfast_core.js" "$bindgen/steadfast_sim.js"
# A panic or a failed allocation traps at once instead of formatting a message no one can read
# (−2.6 KB gz of the main module; scripts/wasm-trap-panics.mjs says why it is the same trap).
node scripts/wasm-trap-panics.mjs "$bindgen/steadfast_core_bg.wasm" "$bindgen/steadfast_sim_bg.wasm"

# Does this .wasm instantiate with the generated glue, in Node 24? Calls version() when exported.
loads() { # loads <wasm file>
  local d; d="$(mktemp -d)"
  cp "$bindgen/steadfast_core.js" "$d/" && cp "$1" "$d/steadfast_core_bg.wasm"
  node --input-type=module -e '
    import { readFileSync } from "node:fs";
    const m = await import(process.argv[1] + "/steadfast_core.js");
    m.initSync({ module: readFileSync(process.argv[1] + "/steadfast_core_bg.wasm") });
    if (typeof m.version === "function") m.version();
  ' "$d" >/dev/null 2>&1
  local rc=$?; rm -rf "$d"; return $rc
}

if [ "${1:-}" = "--compare-wasm-opt" ]; then
  node -e '
    const { readFileSync } = require("node:fs"); const z = require("node:zlib");
    const b = readFileSync(process.argv[1]);
    console.log("%s  raw %d  gz %d  br %d", "(no wasm-opt)".padEnd(60), b.length,
      z.gzipSync(b, { level: 9 }).length, z.brotliCompressSync(b).length);' "$bindgen/steadfast_core_bg.wasm"
  for flags in "${CANDIDATES[@]/%/ $WASM_OPT_STRIP}" "$WASM_OPT_FLAGS"; do
    out="$(mktemp --suffix .wasm)"
    t=$(date +%s%N)
    # shellcheck disable=SC2086 # flags are words on purpose
    "$STEADFAST_WASM_OPT" $flags "$bindgen/steadfast_core_bg.wasm" -o "$out"
    ms=$(( ($(date +%s%N) - t) / 1000000 ))
    if loads "$out"; then ok=loads; else ok="DOES NOT LOAD"; fi
    node -e '
      const { readFileSync } = require("node:fs"); const z = require("node:zlib");
      const b = readFileSync(process.argv[1]);
      console.log("%s  raw %d  gz %d  br %d  %s  %sms", process.argv[2].padEnd(60), b.length,
        z.gzipSync(b, { level: 9 }).length, z.brotliCompressSync(b).length, process.argv[3], process.argv[4]);
    ' "$out" "$flags" "$ok" "$ms"
    rm -f "$out"
  done
  exit 0
fi

# wasm-opt is the slow part of a no-change rebuild (seconds), so its output is kept, keyed by its input,
# its flags and its version: same key, same bytes.
opt_cache=target/steadfast-wasm-opt
mkdir -p "$opt_cache"
# Last, the export and import names become one or two characters (−1.0 KB gz of the main module, and
# the glue's calls shrink with them); wasm-opt prints the mapping, scripts/wasm-short-names.mjs applies
# it to the glue and checks it.
SHORT_NAMES="--minify-imports-and-exports-and-modules"
optimise() { # optimise <module name>
  local wasm="$bindgen/$1_bg.wasm" key
  key="$({ sha256sum <"$wasm"; echo "$WASM_OPT_FLAGS $SHORT_NAMES"; "$STEADFAST_WASM_OPT" --version; } | sha256sum | cut -c1-16)"
  if [ -f "$opt_cache/$key.wasm" ] && [ -f "$opt_cache/$key.names.json" ]; then
    step "wasm-opt $WASM_OPT_FLAGS $SHORT_NAMES $1 (unchanged input: cached)"
  else
    step "wasm-opt $WASM_OPT_FLAGS $SHORT_NAMES $1"
    # shellcheck disable=SC2086 # flags are words on purpose
    "$STEADFAST_WASM_OPT" $WASM_OPT_FLAGS $SHORT_NAMES "$wasm" -o "$opt_cache/$key.tmp" >"$opt_cache/$key.names.tmp"
    mv "$opt_cache/$key.names.tmp" "$opt_cache/$key.names.json"
    mv "$opt_cache/$key.tmp" "$opt_cache/$key.wasm"
  fi
  cp "$opt_cache/$key.wasm" "$wasm"
  node scripts/wasm-short-names.mjs "$bindgen/$1.js" "$opt_cache/$key.names.json" "$wasm"
  touch "$opt_cache/$key.wasm" "$opt_cache/$key.names.json"
}
optimise steadfast_core
optimise steadfast_sim
# Keep the cache small: the newest four entries (two modules, current and previous).
find "$opt_cache" -name '*.wasm' -printf '%T@ %p\n' | sort -rn | tail -n +5 | cut -d' ' -f2- | xargs -r rm -f
find "$opt_cache" -name '*.names.json' -printf '%T@ %p\n' | sort -rn | tail -n +5 | cut -d' ' -f2- | xargs -r rm -f

step "assemble pkg/ (pkg-template/ + wasm-bindgen output)"
rm -rf pkg
mkdir pkg
cp -R pkg-template/. pkg/
cp "$bindgen"/steadfast_core.js "$bindgen"/steadfast_core_bg.wasm \
  "$bindgen"/steadfast_sim.js "$bindgen"/steadfast_sim_bg.wasm pkg/
# What ships besides pkg-template/: the licence texts, the changelog and the endpoint contract.
cp LICENSE-MIT LICENSE-APACHE CHANGELOG.md pkg/
mkdir -p pkg/docs
cp docs/checkout-contract.md pkg/docs/

# Fail the build, not the tests, when the optimised module does not load.
entry=index.node.js
step "load check: require('./pkg/$entry') on Node $(node --version)"
node -e 'require(process.argv[1])' "$STEADFAST_ROOT/pkg/$entry"
node -e 'require(process.argv[1])' "$STEADFAST_ROOT/pkg/sim.node.js"

# The npm README's size table, from the files just assembled (never typed by hand).
node scripts/sizes.mjs pkg --readme pkg/README.md >/dev/null

mkdir -p dist
rm -f dist/steadfast-*.tgz
tarball="dist/$(npm pack ./pkg --pack-destination dist --silent | tail -n 1)"
[ -f "$tarball" ] || { echo "build: npm pack did not produce $tarball" >&2; exit 1; }
step "packed $tarball ($(stat -c%s "$tarball") bytes)"

# The table, then the size budget: a file over its ceiling fails the build (scripts/size-budget.json).
node scripts/sizes.mjs pkg --budget scripts/size-budget.json
step "done in $((SECONDS - T0))s"
