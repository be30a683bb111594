import path from 'node:path';

/**
 * Where everything lives in an instance's data directory (the agent's data repo).
 * One place names every path, so that the server, the runner and the hooks agree.
 */
export function dataPaths(dataDir: string) {
  const root = path.resolve(dataDir);
  const system = path.join(root, 'system');
  const logs = path.join(system, 'logs');
  const sessions = path.join(root, 'tmp', 'sessions');
  return {
    root,
    system,
    agentConfig: path.join(system, 'agent_config.json'),
    startup: path.join(system, 'startup.json'),
    schedule: path.join(system, 'schedule.json'),
    state: path.join(system, 'state.json'),
    paused: path.join(system, 'paused'),
    containerfile: path.join(system, 'container', 'Containerfile'),
    containerContext: path.join(system, 'container'),
    hooks: {
      preTick: path.join(system, 'hooks', 'pre-tick'),
      preStop: path.join(system, 'hooks', 'pre-stop'),
      postTick: path.join(system, 'hooks', 'post-tick'),
    },
    logs,
    /** Archived terminals: `tty_N-tick-NNN`. */
    sessionArchive: path.join(logs, 'sessions'),
    tickLog: (tick: number) => path.join(logs, `tick-${String(tick).padStart(3, '0')}.jsonl`),
    inbox: path.join(root, 'inbox'),
    inboxDone: path.join(root, 'inbox', 'done'),
    /** Live per-TTY files for people and hooks. */
    sessions,
    sessionRegistry: path.join(sessions, 'registry.json'),
    tty: (n: number) => path.join(sessions, `tty_${n}`),
    /** Server-private state (the lock, what the agent has seen). Not for hooks. */
    kernelState: path.join(root, 'tmp', 'kernel'),
    serverLock: path.join(root, 'tmp', 'kernel', 'server.lock'),
    tickLock: path.join(root, 'tmp', 'kernel', 'tick.lock'),
    /** What happened (terminals, commands, ticks, messages), as JSON lines: `agent-kernel events`. */
    events: path.join(root, 'tmp', 'kernel', 'events.jsonl'),
    /** Terminal recordings (asciicast v2), `tty_N-tick-NNN.cast`. */
    recordings: path.join(logs, 'recordings'),
  };
}

export type DataPaths = ReturnType<typeof dataPaths>;
