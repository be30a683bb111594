import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * The rcfile of the shells the kernel starts. It sources the user's own startup file first
 * (never editing it), then adds OSC 133 marks: D with the exit status and A before each
 * prompt (PROMPT_COMMAND), B where the prompt ends (PS1), C when a command starts (PS0). The marks are invisible on screen
 * and tell `wait` that a command finished, and with what status.
 */
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
  printf '\\033]133;D;%s\\007\\033]133;A\\007' "\${__agent_kernel_status:-0}"
  case "$PS1" in *'133;B'*) ;; *) PS1="\${PS1}\\[\\e]133;B\\a\\]" ;; esac
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
  PS0="\${PS0:-}\\e]133;C\\a"
  # The status the shell exits with (tmux may learn it late on a busy machine), unless the user traps EXIT.
  if [ -z "$(trap -p EXIT)" ]; then
    trap '__agent_kernel_status=$?; printf "\\033]7133;%d\\007" "$__agent_kernel_status"; sleep 0.2 2>/dev/null; exit $__agent_kernel_status' EXIT
  fi
fi
`;

export function bashRcfilePath(kernelStateDir: string): string {
  return path.join(kernelStateDir, 'bashrc');
}

/** Write the rcfile into the host-private shell folder (shown read-only to the container). */
export async function writeBashRcfile(kernelStateDir: string): Promise<string> {
  const file = bashRcfilePath(kernelStateDir);
  await writeFileAtomic(file, BASH_RCFILE, 0o644);
  return file;
}

/** The command line of the default terminal: an interactive bash with the integration. */
export function integratedShellCommand(shell: string, rcfile: string): string {
  return `exec ${shell} --rcfile '${rcfile.replace(/'/g, `'\\''`)}' -i`;
}

/** How long a command's terminal lingers after the command ends (see commandLine). */
export const COMMAND_LINGER_SECONDS = 0.2;

/**
 * A private OSC the command wrapper prints with the command's exit status: tmux may report
 * a pane dead before it has reaped the process (no status yet) on a busy machine.
 */
export const EXIT_STATUS_OSC = 7133;

/** A private OSC the integrated shell prints before each prompt: how many background jobs still run. */
export const JOBS_OSC = 7134;

/**
 * The command line of a terminal opened with a command. When a pane's process ends, tmux
 * 3.3 closes its pty and loses output still on its way through the kernel. So a bash with
 * job control (the command owns the foreground, and tmux names it) runs the command,
 * lingers a moment, and exits with the command's status.
 */
export function commandLine(command: string): string {
  const script = `set -m\n${command}\nstatus=$?; printf '\\033]${EXIT_STATUS_OSC};%d\\007' "$status"; sleep ${COMMAND_LINGER_SECONDS}; exit $status`;
  return `exec bash -c '${script.replace(/'/g, `'\\''`)}'`;
}
