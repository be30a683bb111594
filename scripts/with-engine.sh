#!/usr/bin/env bash
# with-engine.sh CMD...: make sure an engine and the base image are there (ensure-engine.sh),
# run CMD, and at the end stop the engine (dockerd, or Podman's service with AGENT_KERNEL_ENGINE=podman)
# this script started, by PID, and nothing else.
# Exits with CMD's exit code.
set -euo pipefail
LOG_PREFIX=with-engine
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -gt 0 ] || die "usage: scripts/with-engine.sh COMMAND [ARGS...]"

started_pid_file=$(mktemp)
stop_started_engine() {
  local pid
  pid=$(cat "$started_pid_file" 2>/dev/null || true)
  rm -f "$started_pid_file"
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping the engine this run started (PID $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      log "the engine (PID $pid) did not stop within 30 s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  for file in dockerd.pid podman.pid; do
    if [ "$(cat "$ENGINE_STATE_DIR/$file" 2>/dev/null || true)" = "$pid" ]; then rm -f "$ENGINE_STATE_DIR/$file"; fi
  done
}
trap stop_started_engine EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

AGENT_KERNEL_STARTED_PID_FILE="$started_pid_file" bash "$ROOT/scripts/ensure-engine.sh"
set +e
"$@"
status=$?
set -e
exit "$status"
