import type { TerminalsRuntime } from '../terminals/runtime.js';
import type { Terminals } from '../terminals/terminals.js';

/** Why each runtime's terminals were last started again: what the call that noticed was told by tmux. */
const restartReasons = new WeakMap<TerminalsRuntime, string>();

/** The terminals went away under a call (tmux or its container ended): remember why, for every session's notice. */
export function terminalsWentAway(runtime: TerminalsRuntime, reason: string): void {
  restartReasons.set(runtime, reason);
}

/**
 * What a session is told at its first call after the terminals it used were started again
 * (the container stopped or restarted under them): why, which terminals were lost and where
 * their last scrollback is, and which still run. login says the same in its own words.
 */
export function lostNotice(runtime: TerminalsRuntime, terminals: Terminals): string {
  const reason = restartReasons.get(runtime);
  const { lost, adopted } = terminals.adoptReport;
  const why = `The terminals went away${reason ? ` (${reason})` : ''}: the container stopped or restarted, and they were started again.`;
  const gone = lost.map((t) => `TTY ${t.tty} (${t.command}) was lost; its last scrollback is in ${t.scrollbackPrev}.`);
  const still = adopted.length > 0 ? [`Still running: TTY ${adopted.join(', ')}.`] : [];
  const next = lost.length > 0 ? ['Open a new terminal with open() where you need one.'] : [];
  return [why, ...gone, ...still, ...next].join(' ');
}
