#!/bin/bash
# Installs the build into a scratch prefix and loads the installed cuckoo_redis.so into a
# redis-server listening on a Unix socket only (no port to pick), then answers one command.
#   redis/install_check.sh BUILD_DIR WORK_DIR REDIS_SERVER REDIS_CLI
set -euo pipefail
build=$1 work=$2 server=$3 cli=$4
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
module=$(find "$work/prefix" -name cuckoo_redis.so | head -n 1)
test -n "$module" || { echo "cuckoo_redis.so was not installed" >&2; exit 1; }
"$server" --port 0 --unixsocket "$work/redis.sock" --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" --loadmodule "$module" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  [ -S "$work/redis.sock" ] && "$cli" -s "$work/redis.sock" PING >/dev/null 2>&1 && break
  sleep 0.05
done
test "$("$cli" -s "$work/redis.sock" CF.ADD filter item)" = 1
test "$("$cli" -s "$work/redis.sock" CF.EXISTS filter item)" = 1
echo "installed module $module answers"
