import path from 'node:path';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * The rcfile of the shells the kernel starts. It sources the user's own startup file first
 * (never editing it), then adds OSC 133 marks: D with the exit status and A before each
 * prompt (PROMPT_COMMAND), B where the prompt ends (PS1, after the title: SHELL_TITLE_PREFIX),
 * C when a command starts (PS0). The marks are invisible on screen
 * and tell `wait` that a command finished, and with what status. Each carries the terminal's
 * key (`ak=`, MARK_KEY_PARAM): the same bytes in a file or a web page the agent prints are not marks.
 */
/**
 * How long a terminal's last process lingers after announcing its exit status. tmux 3.3
 * closes a pane whose process ended without reading what is still in its pty, and on a busy
 * machine (or while a control client is behind) that can be the last few hundred bytes: the
 * announcement comes after them in the stream, so the server ends the terminal as soon as
 * it reads the announcement, and the linger only keeps the pty open until then.
 */
const EXIT_LINGER_SECONDS = 3;

/** The environment variable that gives a terminal's shell its key for the exit announcement. */
export const STATUS_KEY_VARIABLE = 'AGENT_KERNEL_STATUS_KEY';

/**
 * The integrated shell's prompt also sets the terminal's title to `ak-<key>-<status>-<end>`
 * (the last status, and when that command ended, in microseconds since the epoch). The marks
 * reach only a server that reads them; the title stays in tmux, so a server that adopts the
 * terminal later learns how a command it saw start ended while no server was attached.
 */
export const SHELL_TITLE_PREFIX = 'ak-';

export interface TitledEnd {
  exitCode: number;
  /** When the command ended, in ms since the epoch (the container shares the host's clock). */
  endedAt: number;
}

/** The command end a title tells, if the terminal's own shell (with this key) set it. */
export function parseShellTitle(title: string, key: string | undefined): TitledEnd | undefined {
  if (!key || !title.startsWith(`${SHELL_TITLE_PREFIX}${key}-`)) return undefined;
  const match = /^(\d{1,3})-(\d{16,17})$/.exec(title.slice(SHELL_TITLE_PREFIX.length + key.length + 1));
  if (!match) return undefined;
  return { exitCode: Number(match[1]), endedAt: Math.floor(Number(match[2]) / 1000) };
}

export const BASH_RCFILE = `# Written by agent-kernel: shell integration for the agent's terminals. Do not edit;
# it is rewritten at every start. Your own ~/.bashrc is read first, unchanged.
if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
__agent_kernel_prompt() {
  __agent_kernel_status=$?
  return $__agent_kernel_status
}
# Runs last, after anything of the user's (slow hooks included), right before the prompt:
# D with the status, A, and a PS1 that ends with mark B.
__agent_kernel_prompt_end() {
  local __agent_kernel_jobs
  __agent_kernel_jobs=$(jobs -pr | wc -l)
  printf '\\033]7134;%s\\007' "\${__agent_kernel_jobs// /}"
  printf '\\033]133;D;%s;ak=%s\\007\\033]133;A;ak=%s\\007' "\${__agent_kernel_status:-0}" "$__agent_kernel_key" "$__agent_kernel_key"
  __agent_kernel_ended=\${EPOCHREALTIME//[!0-9]/}
  case "$PS1" in *'133;B'*) ;; *) PS1="\${PS1}\\[\\e]2;${SHELL_TITLE_PREFIX}\${__agent_kernel_key}-\\\${__agent_kernel_status:-0}-\\\${__agent_kernel_ended}\\a\\e]133;B;ak=\${__agent_kernel_key}\\a\\]" ;; esac
  return \${__agent_kernel_status:-0}
}
if [ -z "\${__agent_kernel_integrated:-}" ]; then
  __agent_kernel_integrated=1
  if [ "$(declare -p PROMPT_COMMAND 2>/dev/null | cut -c1-10)" = "declare -a" ]; then
    PROMPT_COMMAND=(__agent_kernel_prompt "\${PROMPT_COMMAND[@]}" __agent_kernel_prompt_end)
  else
    # Newlines, not ";": the user's own PROMPT_COMMAND may end with one already.
    PROMPT_COMMAND="__agent_kernel_prompt
\${PROMPT_COMMAND:-}
__agent_kernel_prompt_end"
  fi
  # The kernel's commands (ak-mail: src/mail), in bin/ beside this file and as read-only as it.
  case ":$PATH:" in *":\${BASH_SOURCE[0]%/*}/bin:"*) ;; *) PATH="$PATH:\${BASH_SOURCE[0]%/*}/bin" ;; esac
  # The terminal's key for its marks and its exit status; kept from the programs the shell starts.
  __agent_kernel_key=\${AGENT_KERNEL_STATUS_KEY:-}
  unset AGENT_KERNEL_STATUS_KEY
  PS0="\${PS0:-}\\e]133;C;ak=\${__agent_kernel_key}\\a"
  # Announce the status the shell exits with, then linger until the server has read it (see
  # EXIT_LINGER_SECONDS), unless the user traps EXIT.
  if [ -z "$(trap -p EXIT)" ] && [ -n "$__agent_kernel_key" ]; then
    trap '__agent_kernel_status=$?; printf "\\033]7133;%s;%d\\007" "$__agent_kernel_key" "$__agent_kernel_status"; sleep ${EXIT_LINGER_SECONDS} 2>/dev/null; exit $__agent_kernel_status' EXIT
  fi
fi
`;

export function bashRcfilePath(privateStateDir: string): string {
  return path.join(privateStateDir, 'bashrc');
}

/** Write the rcfile into the host-private shell folder (shown read-only to the container). */
export async function writeBashRcfile(privateStateDir: string): Promise<string> {
  const file = bashRcfilePath(privateStateDir);
  await writeFileAtomic(file, BASH_RCFILE, 0o644);
  return file;
}

/** The command line of the default terminal: an interactive bash with the integration. */
export function integratedShellCommand(shell: string, rcfile: string): string {
  return `exec ${shell} --rcfile ${shellQuote(rcfile, true)} -i`;
}

/**
 * A private OSC a terminal's last process prints when it ends: `<key>;<status>`. The key is
 * the terminal's own (random, given at open), so the same bytes printed by a program (a
 * `cat` of another terminal's raw log) announce nothing.
 */
export const EXIT_STATUS_OSC = 7133;

/** The parameter of an OSC 133 mark that carries the terminal's key: `133;D;0;ak=<key>`. */
export const MARK_KEY_PARAM = 'ak=';

/** A private OSC the integrated shell prints before each prompt: how many background jobs still run. */
export const JOBS_OSC = 7134;

/**
 * The command line of a terminal opened with a command: a bash with job control (the command
 * owns the foreground, and tmux names it) runs the command, announces its status with the
 * terminal's key, lingers (EXIT_LINGER_SECONDS) and exits with that status.
 */
export function commandLine(command: string, key: string): string {
  const script = `set -m\n${command}\nstatus=$?; printf '\\033]${EXIT_STATUS_OSC};${key};%d\\007' "$status"; sleep ${EXIT_LINGER_SECONDS}; exit $status`;
  return `exec bash -c ${shellQuote(script, true)}`;
}
