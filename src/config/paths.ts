import path from 'node:path';
import { configHome, instanceStateRoot } from './homes.js';

/**
 * Where everything lives. Two places, never mixed:
 * - the data directory (the agent's data repo): the container can write all of it, so the
 *   host only ever READS it, as untrusted input;
 * - the instance's host-private state directory, outside the data dir: everything the host
 *   writes (locks, seen marks, tick files, the hook socket, logs, per-TTY files, archives).
 *   What the agent must read from it is shown to the container read-only, at the data-dir
 *   paths seed 000 names (`showToContainer`).
 * One place names every path, so that the server, the runner and the hooks agree.
 */

/** Paths inside the data directory: agent-writable, read by the host as untrusted input. */
export function dataPaths(dataDir: string) {
  const root = path.resolve(dataDir);
  const system = path.join(root, 'system');
  return {
    root,
    system,
    agentConfig: path.join(system, 'agent_config.json'),
    startup: path.join(system, 'startup.json'),
    schedule: path.join(system, 'schedule.json'),
    paused: path.join(system, 'paused'),
    containerfile: path.join(system, 'container', 'Containerfile'),
    containerContext: path.join(system, 'container'),
    hooks: {
      preTick: path.join(system, 'hooks', 'pre-tick'),
      preStop: path.join(system, 'hooks', 'pre-stop'),
      postTick: path.join(system, 'hooks', 'post-tick'),
    },
    inbox: path.join(root, 'inbox'),
    inboxDone: path.join(root, 'inbox', 'done'),
    /** Messages the agent sends (src/mail): hostile input the post office collects. */
    outbox: path.join(root, 'outbox'),
    /** Where the container sees the host-private logs, per-TTY files and shell files (read-only mounts). */
    shownLogs: path.join(system, 'logs'),
    shownSessions: path.join(root, 'tmp', 'sessions'),
    shownShell: path.join(root, 'tmp', 'kernel'),
  };
}

export { stateHome } from './homes.js';

/** Where an instance's secrets live (`runner.secrets_dir`, relative to the config home, or `<config home>/secrets/<name>/`). */
export function secretsPath(name: string, configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return configured ? path.resolve(configHome(env), configured) : path.join(configHome(env), 'secrets', name);
}

/**
 * Paths of one instance: its data directory (untrusted) and its host-private state
 * directory `<stateHome>/instances/<name>/` (mode 0700; see ensureStateDirs):
 * - `kernel/`: never shown to the container (locks, seen marks, state.json, tick work files, hook socket);
 * - `sessions/`: live per-TTY files and registry.json, shown read-only at `<data>/tmp/sessions`;
 * - `logs/`: server/runner logs, tick transcripts, archives, shown read-only at `<data>/system/logs`;
 * - `shell/`: the terminals' rcfile, shown read-only at `<data>/tmp/kernel`.
 */
export function instancePaths(name: string, dataDir: string, env: NodeJS.ProcessEnv = process.env) {
  const data = dataPaths(dataDir);
  if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.includes('..') || name === '.') {
    throw new Error(`instance name ${JSON.stringify(name)} cannot name a state directory`);
  }
  const stateRoot = instanceStateRoot(name, env);
  const privateState = path.join(stateRoot, 'private');
  const sessions = path.join(stateRoot, 'sessions');
  const logs = path.join(stateRoot, 'logs');
  const shell = path.join(stateRoot, 'shell');
  return {
    ...data,
    /** The operator's configuration of this instance (operator-config.ts): out of the container's reach. */
    operatorConfig: path.join(configHome(env), 'instances', `${name}.json`),
    stateRoot,
    /** Host-only kernel state: never mounted into the container. */
    privateState,
    state: path.join(privateState, 'state.json'),
    instanceLock: path.join(privateState, 'instance.lock'),
    tickLock: path.join(privateState, 'tick.lock'),
    /** Held while the instance's image builds: processes that bring it up together build it once. */
    buildLock: path.join(privateState, 'build.lock'),
    /**
     * The harness's working directory: an empty host-private folder. Not the data repo: agent
     * CLIs read project files from where they run (settings, plugins, CLAUDE.md and the host
     * files it imports), and the container writes the data repo.
     */
    harnessCwd: path.join(privateState, 'harness'),
    /**
     * The harness's own HOME: its settings, logins and sessions, apart from the operator's
     * (runner/harnesses/harness-env.ts). Never the data repo, never the operator's ~/.config.
     */
    harnessHome: path.join(privateState, 'harness-home'),
    /** The host-owned push mirror and the incoming bundle (runner.push). */
    push: path.join(privateState, 'push'),
    logs,
    /** Archived terminals: `tty_N-tick-NNN`. */
    sessionArchive: path.join(logs, 'sessions'),
    tickLog: (tick: number) => path.join(logs, `tick-${String(tick).padStart(3, '0')}.jsonl`),
    /** Live per-TTY files for people and hooks. */
    sessions,
    terminalRegistry: path.join(sessions, 'registry.json'),
    tty: (n: number) => path.join(sessions, `tty_${n}`),
    /** Files the terminals' shells read (the rcfile). */
    shell,
    /** Host-private folders the container sees read-only, and where (same paths for hooks and agent). */
    showToContainer: [
      { source: sessions, target: data.shownSessions },
      { source: logs, target: data.shownLogs },
      { source: shell, target: data.shownShell },
    ] as ReadonlyArray<{ source: string; target: string }>,
    /** What happened (terminals, commands, ticks, messages), as JSON lines: `agent-kernel events`. Host only. */
    events: path.join(privateState, 'events.jsonl'),
    /** Ticks watch started and their cost, for the operator's limits (runner.limits). Host only. */
    tickLedger: path.join(privateState, 'tick-ledger.json'),
    /** The operator's pause (runner/tick/paused.ts): only kernel-runner resume removes it; `system/paused` is the agent's view of it. Host only. */
    pauseRecord: path.join(privateState, 'paused'),
    /** The container was saved in a snapshot and removed (kernel-runner suspend): sandbox/container/suspended.ts. Host only. */
    suspendRecord: path.join(privateState, 'suspended.json'),
    /**
     * The post office (src/mail). Host only: `queue/` (messages for this agent that its model
     * has not had yet: the operator's and other agents'), `delivered/`, `sent/` (what it sent),
     * `withdrawn/` (what the operator took back from the queue before its model had it).
     * Shown read-only in `shell/`: `mail/` (the agent's mail, rendered) and `bin/ak-mail`.
     */
    mail: {
      queue: path.join(privateState, 'mail', 'queue'),
      delivered: path.join(privateState, 'mail', 'delivered'),
      sent: path.join(privateState, 'mail', 'sent'),
      withdrawn: path.join(privateState, 'mail', 'withdrawn'),
      view: path.join(shell, 'mail'),
      bin: path.join(shell, 'bin'),
    },
    /** Terminal recordings (asciicast v2), `tty_N-tick-NNN.cast`. */
    recordings: path.join(logs, 'recordings'),
  };
}

export type DataPaths = ReturnType<typeof dataPaths>;
export type InstancePaths = ReturnType<typeof instancePaths>;

/** Where the container sees a host-private path (the read-only mounts); other paths are unchanged. */
export function containerView(paths: InstancePaths, hostPath: string): string {
  for (const { source, target } of paths.showToContainer) {
    if (hostPath === source || hostPath.startsWith(`${source}/`)) return target + hostPath.slice(source.length);
  }
  return hostPath;
}

/** The host path behind a path the container sees (the inverse of containerView). */
export function hostView(paths: InstancePaths, viewPath: string): string {
  for (const { source, target } of paths.showToContainer) {
    if (viewPath === target || viewPath.startsWith(`${target}/`)) return source + viewPath.slice(target.length);
  }
  return viewPath;
}
