import { classifyForeground } from '../probe/input-wait.js';
import { isShell } from '../probe/program-name.js';
import type { Tty } from '../terminal/tty.js';
import type { TtyContext } from '../terminal/tty-context.js';

/** How long type() waits at most for the echo of the agent's last keys (a long paste drawn on a starved machine). */
export const ECHO_WAIT_MS = 20_000;
/** No output for this long: the program does not echo (a password prompt) or is busy; what is there is judged. */
const ECHO_QUIET_MS = 2_000;
const POLL_MS = 20;

/**
 * Before type() judges what the agent has not seen, the echo of what it typed last must be
 * there whole: a paste still being drawn reads as rows laid half over each other, and keys sent
 * while the shell takes in the last part (its terminal briefly in cooked mode between two reads)
 * are echoed by the terminal itself, out of place. So a type right after a type waits until
 * every typed line is echoed and, after an Enter, until the shell answers it (a prompt or output,
 * or it waits at its prompt again, or a command took the foreground); at most ECHO_WAIT_MS, and
 * no longer than ECHO_QUIET_MS of silence.
 */
export async function echoSettled(ctx: TtyContext, tty: Tty): Promise<void> {
  const start = Date.now();
  const sent = tty.actions.sent;
  const last = sent.at(-1);
  if (!last || !tty.actions.pending) return;
  const enter = 'key' in last ? last.key === 'Enter' : last.enter;
  while (tty.alive && !tty.emulator.alternateScreen) {
    const now = Date.now();
    if (now - start > ECHO_WAIT_MS || now - Math.max(tty.emulator.lastOutputAt, tty.actions.pending?.at ?? 0) > ECHO_QUIET_MS) return;
    await tty.emulator.drain();
    const { complete, answered } = tty.tracker.echoProgress(tty.emulator);
    if (complete && (!enter || answered || (await shellAnswered(ctx, tty)))) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The shell took the Enter: it reads at its prompt again, or a command of its own holds the terminal. */
async function shellAnswered(ctx: TtyContext, tty: Tty): Promise<boolean> {
  const pid = tty.state?.pid;
  if (!isShell(tty.program) || pid === undefined) return true;
  const sample = await ctx.inputWatch.foreground(pid);
  if (!sample || sample.tpgid === undefined) return true;
  return sample.tpgid !== pid || classifyForeground(sample) === 'input';
}
