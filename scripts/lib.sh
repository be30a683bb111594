# Shared helpers for the set-up scripts (sourced, not run).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ENGINE_STATE_DIR=${AGENT_KERNEL_ENGINE_DIR:-$ROOT/.engine}
# AGENT_KERNEL_ENGINE: docker (the default) or podman (rootful Podman's API service, on its own socket).
ENGINE_KIND=${AGENT_KERNEL_ENGINE:-docker}
case "$ENGINE_KIND" in
  docker) ;;
  podman) export DOCKER_HOST=${DOCKER_HOST:-unix:///run/podman/podman.sock} ;; # everything after this talks to it
  *) printf '%s: ERROR: AGENT_KERNEL_ENGINE=%s: use docker or podman\n' "${LOG_PREFIX:-agent-kernel}" "$ENGINE_KIND" >&2; exit 1 ;;
esac

log() { printf '%s: %s\n' "${LOG_PREFIX:-agent-kernel}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

now() { date +%s.%N; }
# elapsed START → "12.3"
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# Run as root, or through sudo when there is one.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "this step needs root: $*  (run as root, or install sudo)"
  fi
}

ensure_built() {
  if [ ! -f "$ROOT/dist/bundle/agent-kernel.cjs" ] || [ ! -f "$ROOT/dist/sandbox/engine/engine.js" ]; then
    log "building (npm run build)"
    (cd "$ROOT" && npm run build --silent)
  fi
}

# Does a container engine answer (DOCKER_HOST, else Docker's and Podman's default sockets)?
engine_answers() { node "$ROOT/scripts/engine-ping.mjs" >/dev/null 2>&1; }
