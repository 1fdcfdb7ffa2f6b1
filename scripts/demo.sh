#!/usr/bin/env bash
# Start noemad with no API key and no network: its model calls are answered by
# the scripted provider from noemactl/demo_script.toml (reflection and
# consolidation stay plain, as with no model), and judge rules are accepted.
# Play the demo scenarios into fresh demo minds with `noemactl demo`, start the
# dashboard's proxy (`noemactl ui`), and keep both running until Ctrl-C. On the
# way out they are stopped and waited for, and a temporary home is removed
# (NOEMA_DEMO_HOME, if set, is kept); a daemon that did not stop cleanly keeps
# its home, and its log is shown.
set -euo pipefail

script="$(cd "$(dirname "$0")/../noemactl" && pwd -P)/demo_script.toml"
ctl="$(command -v noemactl)"

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
# What `noemactl demo` needs for its judge and critic scenarios (it names the same when they cannot play);
# a kept NOEMA_DEMO_HOME keeps the config it has.
[ -e "$home/noemad.toml" ] || cat >"$home/noemad.toml" <<TOML
[models]
provider = "scripted"
[models.scripted]
file = "$script"
[models.narrate]
model = ""
[models.summarise]
model = ""
[gate.judge]
enabled = true
TOML

# The daemon runs in its own session, so the terminal's Ctrl-C (and a hangup)
# reaches only this script, whose cleanup sends the one SIGTERM that stops it.
# Letting Ctrl-C reach both raced: bash could deliver its TERM twice around the
# INT, and three stop signals within 5 s is noemad's "force the stop now".
# (setsid execs in place here: a background job is never a group leader.)
setsid noemad >"$log" 2>&1 &
pid=$!
ui=""

# One cleanup, run once, on every way out.
cleanup() {
    trap - EXIT INT TERM HUP
    if [ -n "$ui" ]; then
        kill -TERM "$ui" 2>/dev/null || true
        { wait "$ui"; } 2>/dev/null || true
    fi
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
trap 'exit 129' HUP

# Wait for the socket to answer (the daemon says READY to systemd; here we ask it).
for _ in $(seq 1 100); do
    noemactl status >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done

if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain" >&2; "$@"; }

# The scripted scenarios, each into a fresh mind, narrated as they happen.
step noemactl demo
step noemactl jobs
step noemactl status

# The dashboard: `noemactl ui` prints the address (with its token) once it listens.
: >"$home/ui.url"
noemactl ui >"$home/ui.url" 2>"$home/ui.log" &
ui=$!
url=""
for _ in $(seq 1 100); do
    url="$(head -n 1 "$home/ui.url")"
    [ -n "$url" ] && break
    kill -0 "$ui" 2>/dev/null || break
    sleep 0.1
done
if [ -n "$url" ]; then
    dashboard="The dashboard (noemactl ui, running until Ctrl-C here): $url"
else
    dashboard="The dashboard did not start ($(cat "$home/ui.log")); in another terminal: noemactl ui"
fi

cat >&2 <<MSG

noemad is running (pid $pid) with its data in $home
(removed when the demo stops, unless NOEMA_DEMO_HOME chose it).
$dashboard
In another terminal:
    export PATH="$(dirname "$ctl"):\$PATH" NOEMA_SOCKET=$NOEMA_SOCKET
    noemactl timeline ID            # any id the demo printed
    noemactl gate-status demo-judge
    noemactl events demo-go --follow
    noemactl say demo-judge "is the build green now?" --from bob --channel room:general --wait
    noemactl say demo-critic "When is the migration?" --from alice --wait
    noemactl consolidate demo-go
Press Ctrl-C here to stop it.
MSG
wait "$pid"
