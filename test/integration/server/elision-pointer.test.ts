import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession } from './helpers.js';

const run = promisify(execFile);

interface Change {
  tty: number;
  diff: string;
  totalLines: number;
  elidedLines: number;
}

/** The ranges an elision note names: `lines 11-2000 of /x/scrollback.1, ... and rows 1-28 of /x/screen`. */
function rangesOf(note: string): Array<{ from: number; to: number; file: string }> {
  const list = /they are (.*?); (?:print them all|read them in parts of \d+ lines, the first) with `sed -n (\d+),(\d+)p (\S+?)[;`]/.exec(note);
  expect(list, note).not.toBeNull();
  return [...list![1]!.matchAll(/(?:lines|rows) (\d+)-(\d+) of (\S+?)(?:,| and|$)/g)].map((m) => ({ from: Number(m[1]), to: Number(m[2]), file: m[3]! }));
}

describeWithEngine('the elision note names the files and lines that hold what it left out (real container, SDK client)', () => {
  let test: TestInstance;
  let session: StdioSession;

  /** Read lines of a file inside the container, as the agent would with the note's own command. */
  const sed = async (file: string, from: number, to: number): Promise<string[]> => {
    const { stdout } = await run('docker', ['exec', containerName(test.name), 'sed', '-n', `${from},${to}p`, file], { maxBuffer: 64 * 1024 * 1024 });
    return stdout.replace(/\n$/, '').split('\n');
  };

  /** type a command and wait until it finished; every change wait returned for TTY 0. */
  const runCommand = async (command: string): Promise<Change[]> => {
    expect((await session.call('type', { tty: 0, expect: 'bash', text: command })).isError).toBeFalsy();
    const changes: Change[] = [];
    for (let i = 0; i < 30; i++) {
      const result = await session.ok('wait', { timeout: 30 });
      const content = result.structuredContent as { reason: string; changed: Change[] };
      changes.push(...content.changed.filter((c) => c.tty === 0));
      if (content.reason === 'command-finished') return changes;
    }
    throw new Error(`${command} did not finish`);
  };

  /** Every elided line, read from the files the note names, is exactly the line left out. */
  const checkElided = async (change: Change): Promise<number> => {
    const lines = change.diff.split('\n');
    const noteAt = lines.findIndex((l) => l.startsWith('… ') && l.includes('more lines left out'));
    expect(noteAt, change.diff).toBe(10);
    const lastHead = Number(lines[noteAt - 1]);
    const firstTail = Number(lines[noteAt + 1]);
    const want = Array.from({ length: firstTail - lastHead - 1 }, (_, i) => String(lastHead + 1 + i));
    expect(want.length).toBe(change.elidedLines);
    const got: string[] = [];
    const ranges = rangesOf(lines[noteAt]!);
    if (process.env.SHOW_NOTES) console.log(lines[noteAt]);
    for (const r of ranges) got.push(...(await sed(r.file, r.from, r.to)));
    expect(got.length).toBe(want.length);
    expect(got.map(Number)).toEqual(want.map(Number));
    return ranges.length;
  };

  beforeAll(async () => {
    await ensureBuilt();
    // The smallest cap, so that one long output rotates the scrollback file more than once.
    test = await createTestInstance({ config: { tty: { scrollback_max_bytes: 65_536 } }, files: { 'system/startup.json': JSON.stringify({ terminals: [] }) } });
    session = await connectStdio(test.dataDir);
    await session.call('login');
    await session.call('open');
    await session.call('wait', { timeout: 20 });
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('points at exact lines of the scrollback and screen files, for output that fits the screen and for output that scrolled far', async () => {
    // 30 lines: the elided ones are all still on the screen. Wide enough that leaving 10 out saves bytes
    // (`seq 1 30` is now shown whole: its 10 middle lines are shorter than the note).
    const short = (await runCommand("seq -f '%060g' 1 30")).filter((c) => c.elidedLines > 0);
    expect(short.length).toBe(1);
    await checkElided(short[0]!);
    const long = (await runCommand('seq 1 5000')).filter((c) => c.elidedLines > 0);
    expect(long.length).toBeGreaterThan(0);
    for (const change of long) await checkElided(change);
  });

  it('stays exact when the scrollback file rotates in the middle of what was left out, and keeps the rotated files it names', async () => {
    const changes = (await runCommand('seq 1 60000')).filter((c) => c.elidedLines > 0);
    let files = 0;
    for (const change of changes) files = Math.max(files, await checkElided(change));
    // 60,000 lines are about 350 KB: the elided lines span rotated files, the live one and the screen.
    expect(files).toBeGreaterThan(2);
  });
});
