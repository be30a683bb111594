import { describe, expect, it } from 'vitest';
import { collapseRepeats } from '../../../../src/observe/render-new-output.js';
import { capText, renderType, renderWait, shareBudget } from '../../../../src/server/tools/render.js';
import type { TtyReport } from '../../../../src/tty/api/types.js';

describe('shareBudget', () => {
  it.each([
    { lengths: [10, 20], budget: 100, shares: [10, 20] },
    { lengths: [10, 500, 500], budget: 110, shares: [10, 50, 50] },
    { lengths: [1000], budget: 100, shares: [100] },
    { lengths: [], budget: 100, shares: [] },
    { lengths: [30, 1000, 40], budget: 150, shares: [30, 80, 40] },
  ])('$lengths within $budget → $shares', ({ lengths, budget, shares }) => {
    expect(shareBudget(lengths, budget)).toEqual(shares);
  });
});

describe('capText', () => {
  it('keeps short text whole', () => {
    expect(capText('a\nb', 100, '/f')).toEqual({ text: 'a\nb', cutChars: 0 });
  });
  it('keeps head and tail lines and says how much was cut and where the rest is', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const capped = capText(text, 500, '/data/tmp/sessions/tty_1/scrollback');
    expect(capped.text.length).toBeLessThanOrEqual(500);
    expect(capped.text.startsWith('line 0\n')).toBe(true);
    expect(capped.text.endsWith('line 999')).toBe(true);
    expect(capped.text).toMatch(new RegExp(`\\[\\.\\.\\. ${capped.cutChars} characters left out.*tty_1/scrollback\\]`));
    expect(capped.text).not.toMatch(/\nine \d/);
  });
});

describe('renderWait', () => {
  const report = (tty: number, text: string, extra: Partial<TtyReport> = {}): TtyReport => ({
    tty,
    program: 'bash',
    alive: true,
    fullScreen: false,
    text,
    totalLines: text.split('\n').length,
    elidedLines: 0,
    files: { scrollback: `/d/tty_${tty}/scrollback`, screen: `/d/tty_${tty}/screen` },
    ...extra,
  });

  it('shows each changed terminal under a header with its exit code, duration and the open list', () => {
    const { text, structured } = renderWait({
      reason: 'command-finished',
      elapsedMs: 42,
      changed: [report(1, '$ false', { exitCode: 1, durationMs: 3 }), report(2, 'bye', { alive: false, exitCode: 0, archivedTo: '/a/tty_2-tick-007' })],
      open: [{ tty: 1, program: 'bash', alive: true }],
    });
    expect(text).toBe(
      [
        'Waited 42 ms (a command finished).',
        '=== TTY 1 | bash | exit 1 | 3 ms ===',
        '$ false',
        '=== TTY 2 | bash | exited with 0 ===',
        'bye',
        '[TTY 2 ended and was closed; its scrollback is archived at /a/tty_2-tick-007]',
        'Open terminals: 1 bash.',
      ].join('\n'),
    );
    expect(structured.changed[0]).toMatchObject({ tty: 1, exitCode: 1, durationMs: 3, diff: '$ false', cutChars: 0 });
  });

  it('says when nothing changed and when nothing is open', () => {
    const { text } = renderWait({ reason: 'timeout', elapsedMs: 5000, changed: [], open: [] });
    expect(text).toBe('Waited 5.0 s (timed out).\nNothing new on any terminal.\nNo terminal is open: call open() to start one.');
  });

  it('one terminal changed and the reason is about it: one line says which, what runs, why and how long', () => {
    const open = [{ tty: 0, program: 'python3', alive: true }];
    const repl = report(0, '42\n>>>', { program: 'python3' });
    expect(renderWait({ reason: 'input', input: { tty: 0, prompt: '>>>' }, elapsedMs: 31, changed: [repl], open }).text).toBe(
      'TTY 0 | python3 | waiting for input: `>>>` (waited 31 ms)\n42\n>>>',
    );
    expect(renderWait({ reason: 'matched', matched: { tty: 0, text: '(gdb)' }, elapsedMs: 1500, changed: [repl], open }).text).toMatch(
      /^TTY 0 \| python3 \| matched: `\(gdb\)` \(waited 1\.5 s\)\n/,
    );
    expect(renderWait({ reason: 'timeout', elapsedMs: 2000, changed: [repl], open }).text).toMatch(/^TTY 0 \| python3 \| timed out \(waited 2\.0 s\)\n/);
    // The reason is about another terminal: the long form names it.
    expect(renderWait({ reason: 'input', input: { tty: 3, prompt: 'name?' }, elapsedMs: 31, changed: [repl], open }).text).toMatch(
      /^Waited 31 ms \(TTY 3 waiting for input: `name\?`\)\.\n=== TTY 0 \| python3 ===\n/,
    );
  });
});

describe('renderType', () => {
  it('says where the keys went, not what the agent typed', () => {
    expect(renderType({ tty: 2, sent: 'text', bytes: 7, enter: true })).toBe('Typed into TTY 2.');
    expect(renderType({ tty: 2, sent: 'text', bytes: 7, enter: false })).toBe('Typed into TTY 2, no Enter.');
    expect(renderType({ tty: 2, sent: 'paste', bytes: 70, enter: true })).toBe('Pasted into TTY 2.');
    expect(renderType({ tty: 2, sent: 'key', key: 'C-c', bytes: 0, enter: false })).toBe('Sent C-c to TTY 2.');
  });
});

describe('collapseRepeats', () => {
  it('shows a run of identical lines once with a count, and keeps short runs', () => {
    expect(collapseRepeats(['text', '~', '~', '~', '~', '~', 'status'].join('\n'))).toBe(['text', '~', '… 4 more lines like that …', 'status'].join('\n'));
    expect(collapseRepeats('a\n\n\nb')).toBe('a\n\n\nb');
  });
});
