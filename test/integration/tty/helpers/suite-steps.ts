import { expect } from 'vitest';
import { isCodedError } from '../../../../src/errors.js';
import type { TtyManager } from '../../../../src/tty/tty-manager.js';
import type { TtyReport, WaitResult } from '../../../../src/tty/api/types.js';
import { type Terminals, reportOf, waitFor } from './terminals.js';

/** Steps the shared terminal suite repeats. */

export async function codeOf(promise: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (isCodedError(error)) return { code: error.code, message: error.message, details: { ...error.details } };
    throw error;
  }
  throw new Error('expected a CodedError, but the call succeeded');
}

/** Open a shell and look at its first prompt, so that nothing is unseen. */
export async function openShell(t: Terminals): Promise<number> {
  const { tty } = await t.manager.open();
  await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
  return tty;
}

/** Run a command in a shell and return the wait result of its completion. */
export async function run(t: Terminals, tty: number, command: string, timeout = 20): Promise<WaitResult> {
  await t.manager.type({ tty, expect: 'bash', text: command });
  return t.manager.wait({ timeoutMs: timeout * 1000 });
}

export async function closeAll(t: Terminals): Promise<void> {
  await t.manager.wait({ timeoutMs: 0 });
  for (const info of t.manager.list()) await t.manager.close(info.tty);
}

/** A wait that reports a terminal's command finished, with this exit code and text; returns its report. */
export function expectFinished(result: WaitResult, tty: number, exitCode: number, text?: string): TtyReport {
  expect(result.reason).toBe('command-finished');
  const report = reportOf(result, tty);
  expect(report).toMatchObject({ exitCode });
  if (text !== undefined) expect(report.text).toContain(text);
  return report;
}

/**
 * A restart in the middle of a command: open a shell, type `text`, wait until the server has seen
 * the command start (its shell's start mark) and `wait(seconds)` ends with `reason`; then the
 * server goes, and `gapMs` later another starts.
 */
export async function restartMidCommand(
  t: Terminals,
  text: string,
  { seconds, reason, gapMs = 0 }: { seconds: number; reason: WaitResult['reason']; gapMs?: number },
): Promise<{ tty: number; manager: TtyManager }> {
  const tty = await openShell(t);
  let started = false;
  const subscription = t.manager.events.onCommandStarted((e) => {
    if (e.tty === tty) started = true;
  });
  try {
    await t.manager.type({ tty, expect: 'bash', text });
    await expect.poll(() => started, { timeout: 10_000 }).toBe(true);
  } finally {
    subscription.dispose();
  }
  expect((await t.manager.wait({ timeoutMs: seconds * 1000 })).reason).toBe(reason);
  await t.manager.dispose();
  if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  return { tty, manager: await t.restart() };
}
