#!/usr/bin/env bash
# Make sure this machine can run agent-kernel's containers:
#   1. install Debian's docker.io, tmux and mmdebstrap when missing (apt-get update once first),
#      and chromium, asciinema and shellcheck (the web view's browser tests, recording checks, the check of assets/*.sh);
#   2. start dockerd in the background when no engine answers (log in .engine/dockerd.log), with
#      --userns-remap=default: root in the agent's containers is then an unprivileged host uid
#      (the second boundary under the hardening; docs/security.md). An engine that already
#      answers is used as it is, and its boundary is printed;
#   3. bootstrap the base image (debian:bookworm-slim) offline with mmdebstrap when it is missing.
# Idempotent. When it starts dockerd it writes the PID to .engine/dockerd.pid and, if set,
# to $AGENT_KERNEL_STARTED_PID_FILE (with-engine.sh uses that to stop only what it started).
# Knobs: AGENT_KERNEL_ENGINE (docker, the default, or podman: Debian's podman, catatonit and runc are
# installed and its API service is started as root on DOCKER_HOST, default unix:///run/podman/podman.sock,
# with runc, since crun fails on cgroups v1 hosts; log .engine/podman.log),
# DOCKER_HOST (a unix socket gets a dockerd there; anything else must already answer),
# AGENT_KERNEL_DOCKERD_ARGS (extra dockerd flags, e.g. --add-runtime runsc=/usr/bin/runsc for gVisor),
# AGENT_KERNEL_BOUNDARY (userns-remap, the default, or none: dockerd without a user namespace),
# AGENT_KERNEL_DOCKERD_TIMEOUT (s, default 60),
# AGENT_KERNEL_BASE_IMAGE (default debian:bookworm-slim).
set -euo pipefail
LOG_PREFIX=ensure-engine
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BASE_IMAGE=${AGENT_KERNEL_BASE_IMAGE:-debian:bookworm-slim}
DOCKERD_TIMEOUT=${AGENT_KERNEL_DOCKERD_TIMEOUT:-60}
BOUNDARY=${AGENT_KERNEL_BOUNDARY:-userns-remap}

install_packages() {
  local missing=()
  if [ "$ENGINE_KIND" = podman ]; then
    command -v podman >/dev/null 2>&1 || missing+=(podman)
    # Init: true needs catatonit; runc works where crun fails ("cgroups in hybrid mode").
    [ -x /usr/bin/catatonit ] || [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)
    command -v runc >/dev/null 2>&1 || missing+=(runc)
    command -v newuidmap >/dev/null 2>&1 || missing+=(uidmap)
  elif [ -z "${DOCKER_HOST:-}" ] && ! command -v dockerd >/dev/null 2>&1 && ! engine_answers; then missing+=(docker.io); fi
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v asciinema >/dev/null 2>&1 || missing+=(asciinema)
  command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
  if [ ${#missing[@]} -eq 0 ]; then return; fi
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and there is no apt-get: install them with your package manager"
  local start; start=$(now)
  log "installing ${missing[*]} (apt-get)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  log "apt: installed ${missing[*]} in $(elapsed "$start") s"
}

# Wait until the engine answers, or the process PID dies, or TIMEOUT passes.
wait_for_engine() {
  local pid=$1 what=$2 logfile=$3
  local deadline=$((SECONDS + DOCKERD_TIMEOUT))
  until engine_answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$logfile" >&2 || true
      die "$what exited during start-up (its log above, all of it in $logfile)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 20 "$logfile" >&2 || true
      die "$what (PID $pid) did not answer within ${DOCKERD_TIMEOUT} s (log above, all of it in $logfile); it is still running"
    fi
    sleep 0.2
  done
}

start_podman() {
  local address=$DOCKER_HOST
  case "$address" in
    unix://*) ;;
    *) die "DOCKER_HOST=$DOCKER_HOST does not answer, and only a local unix socket can be started here." ;;
  esac
  [ "$(id -u)" = 0 ] || die "no engine answers at $address; start rootless Podman yourself: podman system service --time=0 unix://\$XDG_RUNTIME_DIR/podman/podman.sock &"
  mkdir -p "$ENGINE_STATE_DIR" "$(dirname "${address#unix://}")"
  local logfile="$ENGINE_STATE_DIR/podman.log" start pid manager=()
  # Without systemd, Podman's default cgroup manager (systemd) cannot start a container.
  [ -d /run/systemd/system ] || manager=(--cgroup-manager cgroupfs)
  start=$(now)
  log "no engine answers: starting podman system service $address (runc; log: $logfile)"
  nohup podman --runtime runc "${manager[@]}" system service --time=0 "$address" >"$logfile" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$ENGINE_STATE_DIR/podman.pid"
  if [ -n "${AGENT_KERNEL_STARTED_PID_FILE:-}" ]; then echo "$pid" >"$AGENT_KERNEL_STARTED_PID_FILE"; fi
  wait_for_engine "$pid" "podman system service" "$logfile"
  log "podman: PID $pid answering after $(elapsed "$start") s"
  # Rootless Podman's network (slirp4netns) opens /dev/net/tun as its user: some hosts leave it 0600 (Debian's is 0666).
  if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
    log "/dev/net/tun is $(stat -c %a /dev/net/tun): making it 0666 (its usual mode) for rootless Podman's network"
    chmod 0666 /dev/net/tun
  fi
}

start_dockerd() {
  local address=${DOCKER_HOST:-unix:///var/run/docker.sock}
  case "$address" in
    unix://*) ;;
    *) die "DOCKER_HOST=$DOCKER_HOST does not answer, and only a local unix socket can be started here. Start that engine, or unset DOCKER_HOST." ;;
  esac
  local boundary_args=()
  case "$BOUNDARY" in
    userns-remap) boundary_args=(--userns-remap=default) ;; # dockerd adds the dockremap user and its /etc/subuid range
    none) ;;
    *) die "AGENT_KERNEL_BOUNDARY=$BOUNDARY: use userns-remap (the default) or none" ;;
  esac
  command -v dockerd >/dev/null 2>&1 || die "no engine answers and dockerd is not installed: apt-get install docker.io (or start Podman: podman system service --time=0 unix://\$XDG_RUNTIME_DIR/podman/podman.sock &)"
  [ "$(id -u)" = 0 ] || die "no engine answers; dockerd must be started as root: sudo dockerd &  (or systemctl start docker)"
  mkdir -p "$ENGINE_STATE_DIR"
  local logfile="$ENGINE_STATE_DIR/dockerd.log" start pid
  start=$(now)
  log "no engine answers: starting dockerd -H $address ${boundary_args[*]} (log: $logfile)"
  # shellcheck disable=SC2086
  nohup dockerd -H "$address" "${boundary_args[@]}" ${AGENT_KERNEL_DOCKERD_ARGS:-} >"$logfile" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$ENGINE_STATE_DIR/dockerd.pid"
  if [ -n "${AGENT_KERNEL_STARTED_PID_FILE:-}" ]; then echo "$pid" >"$AGENT_KERNEL_STARTED_PID_FILE"; fi
  wait_for_engine "$pid" dockerd "$logfile"
  log "dockerd: PID $pid answering after $(elapsed "$start") s"
}

ensure_built
install_packages
if engine_answers; then
  description=$(node "$ROOT/scripts/engine-ping.mjs")
  log "engine: $description"
  case "$description" in
    *"boundary none:"*) log "note: this engine was started without a user namespace, and this script leaves a running engine alone. For the second boundary restart it with --userns-remap=default (docs/security.md: The second boundary)" ;;
  esac
elif [ "$ENGINE_KIND" = podman ]; then
  start_podman
else
  start_dockerd
fi
start=$(now)
node "$ROOT/dist/cli/agent-kernel.js" image bootstrap "$BASE_IMAGE" | sed 's/^/  /' >&2
log "base image $BASE_IMAGE: ready after $(elapsed "$start") s"
