#!/usr/bin/env bash
# npm run setup: everything a fresh Debian machine with Node needs to run agent-kernel.
# Installs the npm dependencies, builds, installs and starts a container engine (left running),
# bootstraps the base image, puts the commands on PATH, creates a demo instance, builds its
# image and runs doctor on it. Prints one line a step; everything the steps print goes to
# setup.log (shown when a step fails).
# Demo instance: AGENT_KERNEL_DEMO_NAME (default demo) in AGENT_KERNEL_DEMO_DIR (default ~/agent-kernel-demo).
# Commands: linked the way `npm link` does, into npm's global prefix (`npm prefix -g`) when this
# user can write it, else into ~/.local (bin in ~/.local/bin).
set -euo pipefail
LOG_PREFIX=setup
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

DEMO_NAME=${AGENT_KERNEL_DEMO_NAME:-demo}
DEMO_DIR=${AGENT_KERNEL_DEMO_DIR:-$HOME/agent-kernel-demo}
SETUP_LOG=$ROOT/setup.log
: >"$SETUP_LOG"

# step "what" CMD...: run CMD with its output in setup.log; on failure show its last lines and stop.
step() {
  local what=$1
  shift
  printf '\n== %s: %s\n' "$what" "$*" >>"$SETUP_LOG"
  local from
  from=$(wc -l <"$SETUP_LOG")
  if ! "$@" >>"$SETUP_LOG" 2>&1; then
    tail -n +"$((from + 1))" "$SETUP_LOG" | tail -n 25 | sed 's/^/  | /' >&2
    die "$what failed (its last lines above; all of it in $SETUP_LOG)"
  fi
}

# ensure-engine.sh reports each of its steps on a line of its own ("ensure-engine: ..."): show those, log the rest.
engine_step() {
  printf '\n== engine: scripts/ensure-engine.sh\n' >>"$SETUP_LOG"
  local from status=0
  from=$(wc -l <"$SETUP_LOG")
  bash "$ROOT/scripts/ensure-engine.sh" 2>&1 | tee -a "$SETUP_LOG" | { grep --line-buffered '^ensure-engine: ' | sed -u 's/^ensure-engine: /setup: /' >&2 || true; } || status=$?
  if [ "$status" != 0 ]; then
    tail -n +"$((from + 1))" "$SETUP_LOG" | tail -n 25 | sed 's/^/  | /' >&2
    die "the engine set-up failed (its last lines above; all of it in $SETUP_LOG)"
  fi
}

# The folders of PATH without npm's node_modules/.bin (npm run puts it first): what a new shell would find.
path_outside_npm() { printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd: -; }

# Link agent-kernel and kernel-runner (npm link), and the pinned Claude Code as claude unless another one is on PATH.
link_commands() {
  local prefix bin
  prefix=$(npm prefix -g)
  if ! { [ -w "$prefix" ] || { [ -w "$prefix/bin" ] && [ -w "$prefix/lib/node_modules" ]; }; }; then
    prefix=$HOME/.local
    mkdir -p "$prefix/bin" "$prefix/lib"
  fi
  npm_config_prefix=$prefix npm link --no-audit --no-fund >>"$SETUP_LOG" 2>&1 || die "npm link into $prefix failed (see $SETUP_LOG)"
  bin=$prefix/bin
  local ours=$ROOT/node_modules/@anthropic-ai/claude-code/bin/claude.exe found real
  found=$(PATH=$(path_outside_npm) command -v claude || true)
  real=$(readlink -f "$found" 2>/dev/null || true)
  # None yet, or the pinned one of an agent-kernel checkout (this or another: the latest setup wins, as with
  # npm link): link ours. A Claude Code of anyone else's (npm install -g, the native installer) is kept.
  if [ -z "$found" ] || { [[ "$real" == */node_modules/@anthropic-ai/claude-code/* ]] && grep -qs '"name": "agent-kernel"' "${real%%/node_modules/@anthropic-ai/claude-code/*}/package.json"; }; then
    ln -sfn "$ours" "$bin/claude"
    found=$bin/claude
  fi
  LINKED_BIN=$bin
  CLAUDE_FOUND=$found
}

start=$(now)
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci" npm ci --no-audit --no-fund
  log "npm dependencies installed ($(elapsed "$start") s)"
fi
start=$(now)
step build npm run build --silent
log "built ($(elapsed "$start") s)"

engine_step

link_commands
on_path=no
case ":$(path_outside_npm):" in *":$LINKED_BIN:"*) on_path=yes ;; esac
log "commands agent-kernel, kernel-runner and claude ($CLAUDE_FOUND, $("$CLAUDE_FOUND" --version 2>/dev/null || echo '?')) are in $LINKED_BIN"

if [ ! -f "$DEMO_DIR/system/agent_config.json" ]; then
  step "demo instance" node dist/cli/kernel-runner.js init "$DEMO_NAME" "$DEMO_DIR"
fi
start=$(now)
step "demo container" node dist/cli/agent-kernel.js container up "$DEMO_DIR" --quiet
log "demo instance $DEMO_NAME in $DEMO_DIR: container up ($(elapsed "$start") s)"

log "agent-kernel doctor $DEMO_NAME:"
status=0
PATH="$LINKED_BIN:$PATH" node dist/cli/agent-kernel.js doctor "$DEMO_DIR" | sed 's/^./  &/' || status=${PIPESTATUS[0]}
case "$status" in
  0 | 3)
    [ "$status" = 0 ] && log "ready." || log "set up, except what doctor marks above (each such row says how to fix it)."
    if [ "$on_path" = no ]; then
      if grep -qs '\.local/bin' "$HOME/.profile" && [ "$LINKED_BIN" = "$HOME/.local/bin" ]; then
        log "$LINKED_BIN is not on this shell's PATH yet: open a new login shell (your ~/.profile adds it), or: export PATH=\"$LINKED_BIN:\$PATH\""
      else
        log "$LINKED_BIN is not on PATH: add it, for example: echo 'export PATH=\"$LINKED_BIN:\$PATH\"' >> ~/.profile, then open a new login shell"
      fi
    fi
    log "next: README.md, Quickstart (give Claude Code credentials, then: kernel-runner tick $DEMO_NAME). Full output of this set-up: $SETUP_LOG"
    ;;
  *) die "doctor found a problem (exit $status): see its fix lines above" ;;
esac
