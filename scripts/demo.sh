#!/usr/bin/env bash
# Start noemad on its embedded defaults (no API key, no model), play the
# demo scenarios into fresh demo minds with `noemactl demo`, and keep the
# daemon running until Ctrl-C. On the way out the daemon is stopped and waited
# for, and a temporary home is removed (NOEMA_DEMO_HOME, if set, is kept);
# a daemon that did not stop cleanly keeps its home, and its log is shown.
set -euo pipefail

made_home=""
if [ -n "${NOEMA_DEMO_HOME:-}" ]; then
    home="$NOEMA_DEMO_HOME"
else
    home="$(mktemp -d "${TMPDIR:-/tmp}/noema-demo.XXXXXX")"
    made_home="$home"
fi
export NOEMA_HOME="$home"
export NOEMA_SOCKET="$home/noemad.sock"
mkdir -p "$home"
log="$home/noemad.log"

noemad >"$log" 2>&1 &
pid=$!

# Ctrl-C reaches the daemon and this script together; the daemon takes the
# stop, and the TERM sent here lands during it ("already stopping"), which
# noemad treats as the same stop. One cleanup, run once, on every way out.
cleanup() {
    trap - EXIT INT TERM
    kill -TERM "$pid" 2>/dev/null || true
    status=0
    wait "$pid" 2>/dev/null || status=$?
    if [ "$status" -ne 0 ]; then
        printf 'noemad exited with status %s; its log is %s:\n' "$status" "$log" >&2
        tail -n 20 "$log" >&2 || true
    elif [ -n "$made_home" ]; then
        rm -rf "$made_home"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

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

noemad is running (pid $pid) with its data in $home
(removed when the demo stops, unless NOEMA_DEMO_HOME chose it).
In another terminal:
    export NOEMA_SOCKET=$NOEMA_SOCKET
    noemactl timeline ID            # any id the demo printed
    noemactl events demo-go --follow
    noemactl say demo-go "I picked Go for the worker, too" --from alice
    noemactl consolidate demo-go
Press Ctrl-C here to stop it.
MSG
wait "$pid"
