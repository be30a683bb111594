import { CodedError } from '../../errors.js';

/**
 * The terminal layer's refusals, each with the facts it is about and the next step. The unit
 * tests' stand-in for the terminals (test/unit/server/fake-terminals.ts) throws these same ones.
 */

export function ttyOutOfRange(tty: number, max: number): CodedError {
  return new CodedError('TTY_OUT_OF_RANGE', `There is no TTY ${tty}: terminals are numbered 0 to ${max - 1}.`, { details: { tty, max } });
}

export function ttyNotOpen(tty: number, open: readonly number[]): CodedError {
  return new CodedError('TTY_NOT_FOUND', `TTY ${tty} is not open (${open.length > 0 ? `open: ${open.join(', ')}` : 'none is open'}). Open one with open().`, {
    details: { tty, open },
  });
}

export function ttyCapacity(max: number): CodedError {
  return new CodedError('TTY_CAPACITY', `All ${max} terminals are in use. Close one you no longer need with close(tty), then open again.`, { details: { max } });
}

export function textTooLong(bytes: number, max: number): CodedError {
  return new CodedError(
    'TEXT_TOO_LONG',
    `The text is ${bytes} bytes; type() sends at most ${max} (tty.max_text_bytes). Send it in smaller parts (to write a file: type "cat > file", then each part, then C-d).`,
    { details: { bytes, max } },
  );
}

/** What the agent has not seen, per terminal, in a few words ("a command finished with exit code 1"). */
export interface TtyNews {
  tty: number;
  what: string;
}

export function unseenOutput(news: readonly TtyNews[]): CodedError {
  return new CodedError('UNSEEN_OUTPUT', `${describeNews(news)}. Nothing was sent. Call wait() to see it, then type again.`, {
    details: { ttys: news.map((n) => n.tty), news },
  });
}

/** "TTY 0 has news you have not seen: a command finished (exit 1)", for one or more terminals. */
function describeNews(news: readonly TtyNews[]): string {
  if (news.length === 1) return `TTY ${news[0]!.tty} has news you have not seen: ${news[0]!.what}`;
  return `TTYs ${news.map((n) => n.tty).join(', ')} have news you have not seen: ${news.map((n) => `TTY ${n.tty}, ${n.what}`).join('; ')}`;
}

/**
 * The agent named the wrong program. The next step depends on what runs: a program where the
 * agent meant its shell is to be waited for or stopped, not typed into (unless it asks for input); a shell where it meant a
 * program means that program ended; otherwise the program it did not know of is the one to address.
 */
export function expectMismatch(tty: number, expected: string, actual: string, state: { expectedShell: boolean; actualShell: boolean; asking: boolean }): CodedError {
  const running = `TTY ${tty} is running ${actual || 'an unknown program'}, not ${expected}. Nothing was sent.`;
  let next: string;
  if (state.expectedShell && !state.actualShell && !state.asking) {
    next = `Its shell is busy with ${actual || 'that program'}: call wait() to see it and let it finish, or stop it with type({ tty: ${tty}, expect: "${expected}", text: "C-c" }); then type your command.`;
  } else if (state.expectedShell && !state.actualShell) {
    next = `${actual} waits for input: call wait() to see its prompt, then answer it with expect: "${actual}", or end it to get back to the shell.`;
  } else if (state.actualShell && !state.expectedShell) {
    next = `The shell is at its prompt: ${expected} ended, or never started. Call wait() to see the screen, then type with expect: "${actual}".`;
  } else {
    next = `Check its screen with wait(), then type again with expect: "${actual}".`;
  }
  return new CodedError('EXPECT_MISMATCH', `${running} ${next}`, { details: { tty, expected, actual } });
}

/** A call that came after the server let go of its terminals: it is stopping, or starting them again. */
export function terminalsShuttingDown(): CodedError {
  return new CodedError(
    'SHUTTING_DOWN',
    'This server is stopping (or starting the terminals again), so nothing was done. The terminals and their output live on: call login() again in a few seconds, then repeat this call.',
  );
}
