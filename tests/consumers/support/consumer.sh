# shellcheck shell=bash
# Sourced by tests/consumers/*/run.sh. Makes a throwaway consumer project under tests/.out/consumers/ and
# installs the PACKED tarball into it with npm, as a user would (`npm install steadfast-<v>.tgz`): only the
# files that package.json `files` ships, resolved through its `exports`. Needs STEADFAST_TARBALL and
# STEADFAST_ROOT (scripts/test-consumers.sh exports both).
set -euo pipefail

: "${STEADFAST_TARBALL:?run through scripts/test-consumers.sh (STEADFAST_TARBALL is not set)}"
: "${STEADFAST_ROOT:?run through scripts/test-consumers.sh (STEADFAST_ROOT is not set)}"
[ -f "$STEADFAST_TARBALL" ] || { echo "consumer: tarball $STEADFAST_TARBALL is missing; run 'make build'" >&2; exit 1; }

# new_consumer <name> <package.json type: module|commonjs>  → prints the project dir (fresh every run)
new_consumer() {
  local dir="$STEADFAST_ROOT/tests/.out/consumers/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '{\n  "name": "consumer-%s",\n  "private": true,\n  "type": "%s"\n}\n' "$1" "$2" >"$dir/package.json"
  echo "$dir"
}

# install_into <dir> [more npm specs...]  → npm install the tarball (and any extra packages) into <dir>
install_into() {
  local dir="$1"; shift
  npm install --prefix "$dir" --no-audit --no-fund --no-package-lock --loglevel=error "$STEADFAST_TARBALL" "$@" >/dev/null
  # Fail loudly when the install did not land where this consumer resolves from: tests/node_modules/steadfast
  # (scripts/install-tarball.sh) would otherwise be found one level up and hide a broken install.
  [ -f "$dir/node_modules/steadfast/package.json" ] || {
    echo "consumer: npm did not install steadfast into $dir/node_modules" >&2; exit 1; }
  local want got
  want="$(tar -xOzf "$STEADFAST_TARBALL" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')"
  got="$(node -p 'require(process.argv[1]).version' "$dir/node_modules/steadfast/package.json")"
  [ "$want" = "$got" ] || { echo "consumer: installed steadfast $got, tarball has $want" >&2; exit 1; }
}

# expect_line <log file> <extended regex> <what>  → fail unless the log has a matching line
expect_line() {
  grep -Eq "$2" "$1" || { echo "consumer: expected $3 (/$2/) in the output above" >&2; exit 1; }
}
