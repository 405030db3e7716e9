#!/usr/bin/env bash
# The compiled twins under AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc, Linux). A copy of the tree, its extensions built with
# -fsanitize=address,undefined -fno-sanitize-recover=all, runs pytest with the
# sanitizer runtimes preloaded. Any sanitizer report fails the run: the
# process stops at the first one (status 134) and every report is shown.
#
#   tools/sanitize.sh [PYTEST ARGS...]     e.g. tools/sanitize.sh -n 2 tests
#
# The arguments are pytest's, run from the copy's root. PYTHON: an interpreter
# with the test dependencies (default python3; .ci/run passes its virtualenv's);
# it needs no Cython (the build runs isolated, as pip does). The checkout is
# only read; the recorded data is found as the tests find it from here.
#
# Leak detection is off. CPython 3.12 and later leave thousands of
# unreachable blocks at exit (8,135 after importing json, asyncio and decimal
# on 3.12.1, 12,166 on 3.13.0), and 3.11 running these tests leaves 72 (among
# them tracemalloc's own tracebacks); every one is allocated inside libpython,
# as an extension's objects are, so no suppression separates theirs from ours.
# Nor would LeakSanitizer see a leaked object the cyclic collector tracks
# (list, dict, instance): it stays linked in the collector's lists.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CC=gcc

if [ "$(uname -s)" != Linux ] || ! command -v "$CC" >/dev/null; then
  echo "sanitize.sh: needs Linux and gcc" >&2
  exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/gamecodec-sanitize.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
TREE="$WORK/tree"

# the sources without build products, so every module is compiled here
"$PYTHON" - "$ROOT" "$TREE" <<'PY'
import shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2], ignore=shutil.ignore_patterns(
    ".git", "build", "dist", "wheelhouse", "*.egg-info", "__pycache__", ".*_cache",
    "*.so", "*.pyd", "*.c", "*.html"))
PY

SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all"
echo "building the extensions with $SANITIZE ($("$CC" --version | head -n 1))"
# setup.py keeps debug info (no -g0, no strip) when CFLAGS asks for -g; the
# build fails if an extension does not compile (GAMECODEC_REQUIRE_EXTENSIONS).
# The compiled modules go into the copy's src/, as an in-place build puts them.
CC="$CC" CFLAGS="$SANITIZE -fno-omit-frame-pointer -g -O1" LDFLAGS="$SANITIZE" \
  GAMECODEC_REQUIRE_EXTENSIONS=1 GAMECODEC_NO_EXTENSIONS= \
  "$PYTHON" -m pip wheel -q --no-deps --wheel-dir "$WORK/wheel" "$TREE"
"$PYTHON" - "$WORK"/wheel/*.whl "$TREE/src" <<'PY'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
modules = [name for name in wheel.namelist() if name.endswith((".so", ".pyd"))]
wheel.extractall(sys.argv[2], modules)
print(len(modules), "compiled modules")
PY

mkdir "$WORK/reports"
status=0
(
  # The runtimes first in the process (python itself is not instrumented);
  # PYTHONMALLOC=malloc sends every Python allocation through ASan's malloc,
  # so a stray access into an object is caught too. ASan writes its reports
  # to files, one per process (subprocesses of the tests included); UBSan
  # beside ASan ignores log_path and writes to stderr, which pytest must not
  # capture at the descriptor (--capture=sys) or the report dies with it.
  export LD_PRELOAD="$("$CC" -print-file-name=libasan.so) $("$CC" -print-file-name=libubsan.so)"
  export PYTHONMALLOC=malloc
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:log_path=$WORK/reports/asan"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"
  export PYTHONPATH="$TREE/src:$TREE"
  export GAMECODEC_REQUIRE_EXTENSIONS=1
  export GAMECODEC_SHARED="${GAMECODEC_SHARED:-$(dirname "$ROOT")/shared}"
  cd "$TREE"
  # the instrumented build is the one imported, compiled twins and all
  "$PYTHON" - "$TREE/src" <<'PY' || exit
import sys
import gamecodec
from gamecodec import archipelago, avara, bzrc, lludp, ywindow  # noqa: F401  (load every protocol)
assert gamecodec.__file__.startswith(sys.argv[1]), gamecodec.__file__
impls = gamecodec.implementation()
assert impls and all(impl == "c" for impl in impls.values()), impls
print("sanitized build in use:", impls)
PY
  "$PYTHON" -m pytest -p no:cacheprovider --capture=sys "$@" || exit
) || status=$?

reports=("$WORK"/reports/*)
if [ -e "${reports[0]}" ]; then
  for report in "${reports[@]}"; do
    printf '\n---- %s\n' "${report##*/}" >&2
    cat "$report" >&2
  done
  echo "sanitize.sh: ${#reports[@]} sanitizer report(s)" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
