#!/usr/bin/env bash
# npm run setup: everything a fresh Debian machine with Node needs to run agent-kernel.
# Installs the npm dependencies, builds, installs and starts a container engine (left running),
# bootstraps the base image, creates a demo instance, builds its image and runs doctor on it.
# Demo instance: AGENT_KERNEL_DEMO_NAME (default demo) in AGENT_KERNEL_DEMO_DIR (default ~/agent-kernel-demo).
set -euo pipefail
LOG_PREFIX=setup
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

DEMO_NAME=${AGENT_KERNEL_DEMO_NAME:-demo}
DEMO_DIR=${AGENT_KERNEL_DEMO_DIR:-$HOME/agent-kernel-demo}

start=$(now)
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
  log "npm ci: $(elapsed "$start") s"
fi
start=$(now)
npm run build --silent
log "build: $(elapsed "$start") s"

bash "$ROOT/scripts/ensure-engine.sh"

if [ ! -f "$DEMO_DIR/system/agent_config.json" ]; then
  node dist/cli/kernel-runner.js init "$DEMO_NAME" "$DEMO_DIR"
fi
start=$(now)
node dist/cli/agent-kernel.js container up "$DEMO_DIR"
log "demo container up (image built if needed): $(elapsed "$start") s"

status=0
node dist/cli/agent-kernel.js doctor "$DEMO_DIR" || status=$?
case "$status" in
  0) log "ready. The demo instance is $DEMO_DIR" ;;
  3) log "set-up done except what doctor marks MISSING above (see its fix lines)." ;;
  *) die "doctor found a problem (exit $status): see its fix lines above" ;;
esac
