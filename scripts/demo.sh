#!/usr/bin/env bash
# Start noemad on its embedded defaults (no API key, no model), play the
# demo scenarios into fresh demo minds with `noemactl demo`, and keep the
# daemon running until Ctrl-C.
set -euo pipefail

home="${NOEMA_DEMO_HOME:-$(mktemp -d /tmp/noema-demo.XXXXXX)}"
export NOEMA_HOME="$home"
export NOEMA_SOCKET="$home/noemad.sock"
mkdir -p "$home"
log="$home/noemad.log"

noemad >"$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT INT TERM

# Wait for the socket to answer (the daemon says READY to systemd; here we ask it).
for _ in $(seq 1 100); do
    noemactl status >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done

if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain" >&2; "$@"; }

# Three scripted scenarios, each into a fresh mind, narrated as they happen.
step noemactl demo
step noemactl jobs
step noemactl status

cat >&2 <<MSG

noemad is running (pid $pid) with its data in $home.
In another terminal:
    export NOEMA_SOCKET=$NOEMA_SOCKET
    noemactl timeline ID            # any id the demo printed
    noemactl events demo-go --follow
    noemactl say demo-go "I picked Go for the worker, too" --from alice
    noemactl consolidate demo-go
Press Ctrl-C here to stop it.
MSG
wait "$pid"
