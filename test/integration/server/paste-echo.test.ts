import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession } from './helpers.js';

interface Changed {
  tty: number;
  exitCode?: number;
  diff: string;
  totalLines: number;
  elidedLines: number;
}
interface Waited {
  reason: string;
  changed: Changed[];
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/**
 * A paste is never echoed back, whatever its length: a heredoc taller than the screen (which
 * readline draws with its last lines over one row) and a script pasted into python3 come back
 * as what they printed, counted exactly (issue 38, item 2).
 */
describeWithEngine('a pasted script is not echoed back, whatever its length (real container, SDK client)', () => {
  let test: TestInstance;
  let session: StdioSession;
  const call = (name: string, args: Record<string, unknown> = {}) => session.ok(name, args);
  /** Waits until `done` says the reports so far are complete; returns every report of `tty`, in order. */
  const waitUntil = async (tty: number, done: (reports: Changed[], last: Waited) => boolean): Promise<Changed[]> => {
    const reports: Changed[] = [];
    await expect
      .poll(
        async () => {
          const waited = (await call('wait', { timeout: 20 })).structuredContent as unknown as Waited;
          reports.push(...waited.changed.filter((c) => c.tty === tty));
          return done(reports, waited);
        },
        { timeout: 180_000, interval: 0 },
      )
      .toBe(true);
    return reports;
  };
  const openShell = async (): Promise<number> => {
    const { tty } = (await call('open')).structuredContent as { tty: number };
    await waitUntil(tty, (_r, last) => last.reason === 'input');
    return tty;
  };
  /** The md5 of a file in the container, as `md5sum` prints it. */
  const md5In = async (tty: number, file: string): Promise<string> => {
    await call('type', { tty, expect: 'bash', text: `md5sum ${file}` });
    const reports = await waitUntil(tty, (r) => r.some((c) => c.exitCode !== undefined));
    return /^([0-9a-f]{32}) /m.exec(reports.map((c) => c.diff).join('\n'))?.[1] ?? `no md5sum in ${JSON.stringify(reports)}`;
  };
  /** A heredoc of `body` pasted in one type(): nothing of it comes back, and the file holds it byte for byte. */
  const pasteHeredoc = async (body: readonly string[], file: string): Promise<void> => {
    const tty = await openShell();
    try {
      await call('type', { tty, expect: 'bash', text: `cat > ${file} <<'C27EOF'\n${body.join('\n')}\nC27EOF` });
      const reports = await waitUntil(tty, (r) => r.some((c) => c.exitCode !== undefined));
      const shown = reports.map((c) => c.diff).join('\n');
      expect(reports.at(-1)?.exitCode, shown).toBe(0);
      // No echo: not one line of the paste, not its terminator (drawn over the paste's last row), no note of lines left out.
      expect(shown, shown).not.toMatch(/line \d|\bL\d|C27EOF|cat >|left out/);
      // Exact counts: at most the prompt after it, and nothing said to be left out.
      for (const report of reports) {
        expect(report.elidedLines, shown).toBe(0);
        expect(report.totalLines, shown).toBeLessThanOrEqual(1);
      }
      expect(await md5In(tty, file)).toBe(md5(`${body.join('\n')}\n`));
    } finally {
      await call('close', { tty });
    }
  };

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ files: { 'system/startup.json': JSON.stringify({ terminals: [] }) } });
    session = await connectStdio(test.dataDir);
    await call('login');
  }, 300_000);
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('a 200-line heredoc (taller than the screen): no echo, no overdrawn row, exit 0, the file byte for byte', async () => {
    const body = Array.from({ length: 200 }, (_, i) => `line ${String(i + 1).padStart(3, '0')}: the quick brown fox jumps over the lazy dog`);
    await pasteHeredoc(body, '/tmp/c27.txt');
  }, 300_000);

  it('a 2,000-line heredoc in one type() (within tty.max_text_bytes): no echo, exit 0, the file byte for byte', async () => {
    const body = Array.from({ length: 2000 }, (_, i) => `L${i + 1}`);
    expect(Buffer.byteLength(body.join('\n'))).toBeLessThan(16_384);
    await pasteHeredoc(body, '/tmp/c2000.txt');
  }, 300_000);

  it('a 2,000-line heredoc over tty.max_text_bytes, sent in parts as the refusal advises: no echo, exit 0, the file byte for byte', async () => {
    const body = Array.from({ length: 2000 }, (_, i) => `row ${String(i + 1).padStart(4, '0')} ${'abcdefghij'.repeat(5)}`);
    const tty = await openShell();
    try {
      const parts = Array.from({ length: 10 }, (_, k) => body.slice(k * 200, (k + 1) * 200).join('\n'));
      expect(parts.every((part) => Buffer.byteLength(part) < 16_384)).toBe(true);
      await call('type', { tty, expect: 'bash', text: `cat > /tmp/big.txt <<'C27EOF'\n${parts[0]}` });
      // Each part goes as the agent would send it, right after the last: the echo of its own keys refuses nothing.
      for (const part of parts.slice(1)) await call('type', { tty, expect: 'bash', text: part });
      await call('type', { tty, expect: 'bash', text: 'C27EOF' });
      const reports = await waitUntil(tty, (r) => r.some((c) => c.exitCode !== undefined));
      const shown = reports.map((c) => c.diff).join('\n');
      expect(reports.at(-1)?.exitCode, shown).toBe(0);
      expect(shown, shown).not.toMatch(/row \d|abcdefghij|C27EOF|cat >|left out/);
      for (const report of reports) expect(report.totalLines, shown).toBeLessThanOrEqual(1);
      expect(await md5In(tty, '/tmp/big.txt')).toBe(md5(`${body.join('\n')}\n`));
    } finally {
      await call('close', { tty });
    }
  }, 300_000);

  it('a 300-line script pasted into python3: only what it printed, every line counted, no echo', async () => {
    const tty = await openShell();
    try {
      await call('type', { tty, expect: 'bash', text: 'python3' });
      await waitUntil(tty, (r) => r.some((c) => /^>>> ?$/m.test(c.diff)));
      const script = Array.from({ length: 75 }, (_, i) => [`def f${i}(x):`, `    return x * ${i}`, '', `print('value', ${i}, f${i}(2))`]).flat();
      expect(script).toHaveLength(300);
      await call('type', { tty, expect: 'python3', text: script.join('\n') });
      const reports = await waitUntil(tty, (r) => /value 74 148\n>>>$/.test(r.at(-1)?.diff ?? ''));
      const shown = reports.map((c) => c.diff).join('\n');
      expect(shown, shown).not.toMatch(/def f|return x|print\(/);
      // What it printed, in order: each report's head and tail, and its count of lines left out in between.
      const values = shown.split('\n').filter((line) => line.startsWith('value '));
      const elided = reports.reduce((sum, c) => sum + c.elidedLines, 0);
      expect(values.length + elided, shown).toBe(75);
      expect(values[0]).toBe('value 0 0');
      expect(values.at(-1)).toBe('value 74 148');
      for (const report of reports) {
        const lines = report.diff.split('\n').filter((line) => !line.startsWith('… '));
        expect(lines.length + report.elidedLines, report.diff).toBe(report.totalLines);
        const note = /\((\d+) in all;/.exec(report.diff);
        if (note) expect(Number(note[1])).toBe(report.totalLines);
      }
      await call('type', { tty, expect: 'python3', text: 'exit()' });
      await waitUntil(tty, (r) => r.some((c) => c.exitCode !== undefined));
    } finally {
      await call('close', { tty });
    }
  }, 300_000);
});
