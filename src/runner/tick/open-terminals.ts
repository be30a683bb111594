import { type RegistryTerminal, readTerminalRegistry } from '../../state/terminal-registry.js';

/** A terminal the session registry lists: open until the agent closes it, even once its program exited. */
export interface OpenTerminal {
  tty: number;
  command?: string;
  /** Background processes still running there, as wait last named them. */
  background?: string[];
}

/** Pure: the open terminals of a parsed registry, by number. */
export function openTerminalsOf(ttys: readonly RegistryTerminal[]): OpenTerminal[] {
  return ttys.map((t) => ({ tty: t.tty, command: t.command, ...(t.background?.length ? { background: t.background } : {}) })).sort((a, b) => a.tty - b.tty);
}

/**
 * The open terminals in `<state>/sessions/registry.json`; none when there is no registry.
 * A registry that does not match its schema counts as none and is reported to `onInvalid`.
 */
export async function readOpenTerminals(file: string, onInvalid?: (error: unknown) => void): Promise<OpenTerminal[]> {
  try {
    return openTerminalsOf((await readTerminalRegistry(file))?.ttys ?? []);
  } catch (error) {
    onInvalid?.(error);
    return [];
  }
}

/** Pure: the pre-stop issues for terminals left open that are not startup terminals, and for leftover background processes. */
export function openTerminalIssues(open: readonly OpenTerminal[], startupTtys: ReadonlySet<number>): string[] {
  return open.flatMap((t) => {
    const background = t.background?.length ? ` Still running in the background there: ${t.background.join(', ')}.` : '';
    if (!startupTtys.has(t.tty)) {
      return [`Terminal ${t.tty}${t.command ? ` (${t.command})` : ''} is still open: finish what runs there and close(${t.tty}) before ending the tick.${background}`];
    }
    return background ? [`Terminal ${t.tty} has background processes left:${background.replace(' Still running in the background there:', '')} Stop them (or close(${t.tty})) before ending the tick.`] : [];
  });
}
