import { isShell } from './program-name.js';

/** What `wait` knows about one terminal when it decides whether the agent's action is done. */
export interface CompletionFacts {
  dead: boolean;
  /** A shell-integration "command finished" mark (OSC 133 D) came since the agent typed. */
  commandFinished: boolean;
  program: string;
  alternateScreen: boolean;
  /** The terminal is in non-canonical mode (a REPL or TUI reading keys); undefined when not asked yet. */
  readingKeys: boolean | undefined;
  /** Milliseconds without output since the later of the last output and the last type. */
  quietMs: number;
  settleMs: number;
}

export type Completion = 'command-finished' | 'exited' | 'settled' | 'running' | 'ask-termios';

/**
 * Is what the agent started on this terminal done? A mark or the process's end says so at
 * once. Without a mark, silence counts only for programs that wait for keys (a shell at its
 * prompt, a full-screen program, a REPL in non-canonical mode): a command running silently
 * from the shell (`sleep 5`) keeps the terminal in canonical mode and is still running.
 */
export function judgeCompletion(facts: CompletionFacts): Completion {
  if (facts.dead) return 'exited';
  if (facts.commandFinished) return 'command-finished';
  if (facts.quietMs < facts.settleMs) return 'running';
  if (facts.alternateScreen || isShell(facts.program)) return 'settled';
  if (facts.readingKeys === undefined) return 'ask-termios';
  return facts.readingKeys ? 'settled' : 'running';
}

/** `stty -a` output → is the terminal in non-canonical mode (reading single keys)? */
export function parseReadingKeys(sttyOutput: string): boolean | undefined {
  if (/(^|\s)-icanon(\s|$)/.test(sttyOutput)) return true;
  if (/(^|\s)icanon(\s|$)/.test(sttyOutput)) return false;
  return undefined;
}
