import { CodedError } from '../../errors.js';
import { requestSocketJson, requestSocketJsonLines } from '../../util/net/socket-json.js';
import { SCREEN_ALIVE_MS, type ScreenLine } from '../protocol.js';
import { ensurePrivateSocketDir } from '../socket-path.js';

/**
 * A person's view of the terminals, from the kernel (protocol.ts): each screen as the kernel's
 * own emulator holds it, then what the terminal prints; a person's keys. Nothing here emulates.
 */

export interface ScreenFollower {
  screen(screen: { cols: number; rows: number; ansi: string }): void;
  output(data: string): void;
}

/**
 * Follow TTY `tty`'s screen until the kernel ends the stream (the terminal closed or was
 * resized, the terminals restarted, this reader fell behind: ask again for a fresh screen) or
 * `signal` aborts. Resolves with why it ended; rejects when the kernel cannot be reached
 * (isNoKernel) or refuses (a CodedError with the kernel's words; `status` 503 while starting).
 */
export async function followScreen(socketPath: string, tty: number, options: { history: number; signal: AbortSignal }, follower: ScreenFollower): Promise<string> {
  ensurePrivateSocketDir(socketPath, false);
  let ended = 'the kernel ended the stream';
  let refusal: unknown;
  const { status } = await requestSocketJsonLines(
    socketPath,
    `/v1/terminals/${tty}/screen?history=${options.history}`,
    // The kernel says it is alive every SCREEN_ALIVE_MS: silence past twice that is a hung kernel.
    { idleMs: SCREEN_ALIVE_MS * 2, deadlineMs: 0, who: `The kernel at ${socketPath}`, signal: options.signal },
    (value) => {
      const line = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<string, unknown>>;
      const screen = line.screen as Partial<Extract<ScreenLine, { screen: unknown }>['screen']> | undefined;
      if (screen && typeof screen.ansi === 'string' && Number.isInteger(screen.cols) && Number.isInteger(screen.rows)) {
        follower.screen({ cols: screen.cols!, rows: screen.rows!, ansi: screen.ansi });
      } else if (typeof line.out === 'string') follower.output(line.out);
      else if (typeof line.ended === 'string') ended = line.ended;
      else if (line.error !== undefined) refusal = line.error;
    },
  );
  if (status !== 200) throw new CodedError('KERNEL_UNREACHABLE', `The kernel did not show TTY ${tty}: ${typeof refusal === 'string' ? refusal : `status ${status}`}`, { details: { status } });
  return ended;
}

/** Type `data` into TTY `tty` as a person (the kernel logs it; the agent is told at its next wait). Resolves with the bytes typed. */
export async function typeAsPerson(socketPath: string, tty: number, data: string): Promise<number> {
  ensurePrivateSocketDir(socketPath, false);
  const { status, body } = await requestSocketJson(socketPath, `/v1/terminals/${tty}/keys`, { method: 'POST', timeoutMs: 15_000, who: `The kernel at ${socketPath}`, body: JSON.stringify({ data }) });
  const answer = body as { typed?: unknown; error?: unknown; code?: unknown };
  if (status === 200 && typeof answer.typed === 'number') return answer.typed;
  const code = status === 404 ? 'TTY_NOT_FOUND' : status === 503 ? 'KERNEL_UNREACHABLE' : 'USAGE';
  throw new CodedError(code, typeof answer.error === 'string' ? answer.error : `The kernel refused the keys (status ${status}).`, { details: { status } });
}
