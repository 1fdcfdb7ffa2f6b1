#!/usr/bin/env bash
# Start noemad with a demo mind on its embedded defaults (no API key, no
# model), show it working with noemactl, and keep it running until Ctrl-C.
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

step noemactl mind create demo
step noemactl say demo "Hello, I'm Alice. Can you keep an eye on the build?" --from alice --channel cli
step noemactl observe demo "build #412 failed on test_parser" --source ci
step noemactl say demo "Thanks. Tell me when it's green again." --from alice

# Let the mind take its turns, then show what it recorded.
for _ in $(seq 1 50); do
    [ "$(noemactl --json events demo --kind cycle_completed | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))')" -ge 2 ] && break
    sleep 0.1
done
step noemactl events demo
cycle=$(noemactl --json events demo --kind cycle_started --limit 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"][0]["id"])')
step noemactl timeline "$cycle"
step noemactl status

cat >&2 <<MSG

noemad is running (pid $pid) with its data in $home.
In another terminal:
    export NOEMA_SOCKET=$NOEMA_SOCKET
    noemactl events demo --follow
    noemactl say demo "hello again" --from you
Press Ctrl-C here to stop it.
MSG
wait "$pid"
