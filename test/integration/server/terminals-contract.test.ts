import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { terminalsOf } from '../../../src/server/terminals/start-terminals.js';
import type { Terminals } from '../../../src/server/terminals/terminals.js';
import type { WaitResult } from '../../../src/tty/api/types.js';
import { startTerminals } from '../tty/helpers/terminals.js';
import { FakeTerminals } from '../../unit/server/fake-terminals.js';

/**
 * The fake terminals the MCP unit tests use, and the real TtyManager (host backend, real tmux
 * and bash), through the same assertions: the fake cannot drift from what an agent really gets.
 */

interface Subject {
  terminals: Terminals;
  /** Make output appear on a TTY whose last output was seen (the fake's `print N`, a real `seq`). */
  command(lines: number): string;
  /** The lines that command prints. */
  printed(lines: number): string[];
  cleanup(): Promise<void>;
}

const subjects: Record<string, () => Promise<Subject>> = {
  fake: () => {
    const fake = new FakeTerminals('/data');
    return Promise.resolve({
      terminals: fake,
      command: (lines) => `print ${lines}`,
      printed: (lines) => Array.from({ length: lines }, (_, i) => `line ${i + 1} ${'x'.repeat(60)}`),
      cleanup: () => Promise.resolve(),
    });
  },
  host: async () => {
    const started = await startTerminals('host');
    return {
      terminals: terminalsOf(started.manager, 'host', 20),
      command: (lines) => `seq 101 ${100 + lines}`,
      printed: (lines) => Array.from({ length: lines }, (_, i) => String(101 + i)),
      cleanup: () => started.cleanup(),
    };
  },
};

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCodedError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

/** Wait until a TTY has reported text that passes `done`; returns everything it reported. */
async function seenUntil(terminals: Terminals, tty: number, done: (text: string) => boolean): Promise<string> {
  let text = '';
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const result: WaitResult = await terminals.wait({ timeoutMs: 5000 });
    text += result.changed.filter((r) => r.tty === tty).map((r) => `${r.text}\n`).join('');
    if (done(text)) return text;
  }
  throw new Error(`TTY ${tty} never showed what was expected; it showed:\n${text}`);
}

async function unseenLines(terminals: Terminals, tty: number): Promise<number> {
  return (await terminals.list()).find((t) => t.tty === tty)?.unseenLines ?? 0;
}

describe.each(Object.keys(subjects))('the Terminals contract (%s)', (kind) => {
  let subject: Subject;
  let t: Terminals;
  beforeAll(async () => {
    subject = await subjects[kind]!();
    t = subject.terminals;
  }, 60_000);
  afterAll(async () => {
    await subject?.cleanup();
  });

  it('opens the lowest free numbers and counts capacity', async () => {
    expect(await t.open()).toMatchObject({ tty: 0, capacity: { used: 1, max: 20 } });
    expect(await t.open()).toMatchObject({ tty: 1, capacity: { used: 2, max: 20 } });
    await seenUntil(t, 0, (text) => text.length > 0);
    await t.wait({ timeoutMs: 2000 });
  });

  it('refuses unknown and out-of-range terminals in the same words', async () => {
    expect(await refusal(t.type({ tty: 5, expect: 'bash', text: 'true' }))).toEqual({ code: 'TTY_NOT_FOUND', message: 'TTY 5 is not open (open: 0, 1). Open one with open().' });
    expect(await refusal(t.close(7))).toEqual({ code: 'TTY_NOT_FOUND', message: 'TTY 7 is not open (open: 0, 1). Open one with open().' });
    expect(await refusal(t.type({ tty: 25, expect: 'bash', text: 'true' }))).toEqual({ code: 'TTY_OUT_OF_RANGE', message: 'There is no TTY 25: terminals are numbered 0 to 19.' });
  });

  it('refuses text over the size cap and the wrong program in the same words', async () => {
    expect(await refusal(t.type({ tty: 0, expect: 'bash', text: 'x'.repeat(20_000) }))).toEqual({
      code: 'TEXT_TOO_LONG',
      message: 'The text is 20000 bytes; type() sends at most 16384 (tty.max_text_bytes). Send it in smaller parts (to write a file: type "cat > file", then each part, then C-d).',
    });
    expect(await refusal(t.type({ tty: 0, expect: 'python3', text: 'print(1)' }))).toEqual({
      code: 'EXPECT_MISMATCH',
      message: 'TTY 0 is running bash, not python3. Nothing was sent. The shell is at its prompt: python3 ended, or never started. Call wait() to see the screen, then type with expect: "bash".',
    });
  });

  it('refuses to type over unseen output in the same words; an aborted wait marks nothing seen, and the next wait returns exactly the unseen text', async () => {
    await t.type({ tty: 0, expect: 'bash', text: subject.command(3) });
    await expect.poll(() => unseenLines(t, 0), { timeout: 20_000 }).toBeGreaterThan(0);
    // What the news is depends on timing (new lines, or the command already finished): the words around it do not.
    expect(await refusal(t.type({ tty: 0, expect: 'bash', text: 'true' }))).toEqual({
      code: 'UNSEEN_OUTPUT',
      message: expect.stringMatching(/^TTY 0 has news you have not seen: (a command finished with exit code 0|a new line: `.+`|\d+ new lines, the last `.+`)\. Nothing was sent\. Call wait\(\) to see it, then type again\.$/),
    });

    const before = await unseenLines(t, 0);
    // A wait whose client is gone before it starts (both check the signal before anything else).
    const aborted = new AbortController();
    aborted.abort();
    await expect(t.wait({ timeoutMs: 5000, signal: aborted.signal })).rejects.toThrow();
    expect(await unseenLines(t, 0)).toBe(before);

    const printed = subject.printed(3);
    const text = await seenUntil(t, 0, (all) => all.split('\n').includes(printed[2]!));
    // Every line once, in order: none lost to the aborted wait, none shown twice.
    expect(text.split('\n').filter((line) => printed.includes(line.trimEnd()))).toEqual(printed);
    expect(await unseenLines(t, 0)).toBe(0);
  });

  it('closes a terminal, archives it and frees its number', async () => {
    const closed = await t.close(1);
    expect(closed).toMatchObject({ tty: 1, capacity: { used: 1, max: 20 } });
    expect(closed.archivedTo).toMatch(/\/sessions\/tty_1-tick-000$/);
    expect(await refusal(t.close(1))).toEqual({ code: 'TTY_NOT_FOUND', message: 'TTY 1 is not open (open: 0). Open one with open().' });
    expect((await t.list()).map((info) => info.tty)).toEqual([0]);
  });
});
