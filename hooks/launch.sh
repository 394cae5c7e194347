#!/bin/sh
# Runs one agentctx hook script with uv (PEP 723 inline dependencies), or, when uv has already prepared the
# script's environment and its lock has not changed since, with that environment's interpreter directly
# (lib/find_uv.sh's script_env: a few stat calls, no process). Usage: launch.sh <script-name-without-.py>
# uv is found by lib/find_uv.sh (minimal PATHs, shims). Without uv, SessionStart says once, in one line, how to get it;
# every other hook exits 0 silently. This script never exits non-zero.
event="$1"
root="${CLAUDE_PLUGIN_ROOT:-}"
[ -n "$root" ] && [ -f "$root/hooks/$event.py" ] || root=$(CDPATH= cd -- "$(dirname -- "$0")/.." 2>/dev/null && pwd)

case "$event" in session_end|stop|post_tool_use) hand_off="${AGENTCTX_HOOK_DETACHED:-yes}" ;; *) hand_off="" ;; esac
if [ "$hand_off" = "yes" ]; then
  # SessionEnd, Stop and PostToolUse print nothing and decide nothing, yet Claude Code waits for the first two:
  # Stop at the end of every response, SessionEnd before it exits (all SessionEnd hooks get ~1.5 s together,
  # and what runs longer is cancelled: it was, on a busy machine, in 2 of 6 real sessions); PostToolUse is
  # async, but async hooks still running when `claude -p` ends are cancelled. So the event is saved and
  # handed whole to a detached process in its own session (Claude Code exiting does not end it), and this
  # hook returns at once (a few ms of sh instead of a Python start, its imports and the work).
  payload=$(mktemp "${TMPDIR:-/tmp}/agentctx-$event.XXXXXX" 2>/dev/null) || payload=""
  if [ -n "$payload" ] && cat >"$payload"; then
    export AGENTCTX_HOOK_DETACHED=1
    started="$payload.started"  # the detached side creates it once it runs in its own session
    set -- sh -c ': >"$3"; sh "$1" "$4" <"$2"; rm -f "$2"' "agentctx-$event" \
      "$root/hooks/launch.sh" "$payload" "$started" "$event"
    if command -v setsid >/dev/null 2>&1; then
      setsid "$@" </dev/null >/dev/null 2>&1 &
    elif command -v perl >/dev/null 2>&1; then
      perl -MPOSIX -e 'POSIX::setsid(); exec @ARGV or exit 1' "$@" </dev/null >/dev/null 2>&1 &
    else
      (trap '' HUP INT TERM; exec "$@") </dev/null >/dev/null 2>&1 &
    fi
    # Return only once it has left this process group (a few ms): Claude Code may kill the group right away.
    n=0
    while [ ! -e "$started" ] && [ "$n" -lt 200 ]; do
      sleep 0.005 2>/dev/null || { sleep 1; break; }
      n=$((n + 1))
    done
    rm -f "$started"
    exit 0
  fi
  [ -z "$payload" ] || rm -f "$payload"
fi

. "$root/lib/find_uv.sh"
find_uv

if [ -z "$uv_bin" ]; then
  if [ "$event" = "session_start" ]; then
    cat >/dev/null
    printf '%s\n' '{"systemMessage": "agentctx is inactive: uv was not found. Install it (https://docs.astral.sh/uv/getting-started/installation/, e.g. curl -LsSf https://astral.sh/uv/install.sh | sh) and restart Claude Code."}'
  fi
  exit 0
fi

script="$root/hooks/$event.py"
script_env "$script"
if [ -n "$env_python" ]; then
  # The script's environment was prepared and its lock has not changed since: run its interpreter directly,
  # without uv re-checking it (~10 ms a run). UV is what uv itself sets for the scripts it runs.
  UV="$uv_bin" "$env_python" "$script"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    # The environment is broken (the frame exits 0 whatever the hook does): forget the record, so the next
    # run goes through uv again; one line, exit 0.
    rm -f "$env_stamp"
    printf '%s launch %s: python exited %s; the next run goes through uv\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$event" "$rc" >>"${TMPDIR:-/tmp}/agentctx-hooks.log" 2>/dev/null
  fi
  exit 0
fi

# Through uv, which creates or updates the environment as the lock says; the hook then records the
# environment (agentctx.envstamp) so the next run can skip uv.
errors="${TMPDIR:-/tmp}/agentctx-uv-$event.$$"  # uv's own messages: never shown, read only if uv failed
AGENTCTX_ENV_STAMP="$env_stamp" AGENTCTX_ENV_KEY="$env_key" "$uv_bin" run --quiet --script "$script" 2>"$errors"
rc=$?
if [ "$rc" -ne 0 ]; then
  # uv itself failed (e.g. offline, a proxy, a rejected certificate): one log line; SessionStart alone says,
  # once per cause, what happened and the fix (agentctx.prepare --uv-failed); every other hook is silent.
  said=$(grep -v '^ *$' "$errors" 2>/dev/null | tail -n 1)
  printf '%s launch %s: uv exited %s%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$event" "$rc" "${said:+: $said}" \
    >>"${TMPDIR:-/tmp}/agentctx-hooks.log" 2>/dev/null
  if [ "$event" = "session_start" ]; then
    . "$root/lib/find_python.sh"
    find_python
    if [ -n "$py_bin" ]; then
      PYTHONPATH="$root/lib" "$py_bin" -S -m agentctx.prepare --uv-failed "$errors" 2>/dev/null
    else
      printf '%s\n' '{"systemMessage": "agentctx is inactive: uv could not install its Python packages (details: agentctx-hooks.log in the temp folder)."}'
    fi
  fi
fi
rm -f "$errors"
exit 0
