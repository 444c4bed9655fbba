#!/usr/bin/env bash
# cmake --install puts the Python package where Debian's python3 imports it: installs the build
# into a staging root (DESTDIR) with the default prefix /usr/local, checks that the directory it
# used is on that interpreter's sys.path as the prefix lays it out, then imports the staged copy
# (and nothing from the build tree) and uses it.
set -euo pipefail
build=$1 python=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
DESTDIR="$work/root" cmake --install "$build" --prefix /usr/local >"$work/install.log"
init=$(cd "$work/root" && find . -path '*/cuckoo/__init__.py' | head -1)
[ -n "$init" ] || { echo "no cuckoo/__init__.py installed" >&2; cat "$work/install.log" >&2; exit 1; }
site=${init#.}; site=${site%/cuckoo/__init__.py}
echo "installed to $site"
"$python" - "$site" <<'PY'
import sys
site = sys.argv[1]
assert site in sys.path, f"{site} is not on {sys.executable}'s sys.path: {sys.path}"
PY
for f in _cuckoo.pyi py.typed; do [ -f "$work/root$site/cuckoo/$f" ] || { echo "missing $f" >&2; exit 1; }; done
cd "$work" && env -u PYTHONPATH PYTHONPATH="$work/root$site" PYTHONDONTWRITEBYTECODE=1 "$python" - "$work/root$site" <<'PY'
import sys, numpy as np
import cuckoo
assert cuckoo.__file__.startswith(sys.argv[1]), cuckoo.__file__
f = cuckoo.CuckooFilter(10_000)
assert f.add_many(np.arange(5_000, dtype=np.uint64)) == 5_000
assert f.contains_many(np.arange(5_000)).all() and len(f) == 5_000
print("imported", cuckoo.__file__, f)
PY
