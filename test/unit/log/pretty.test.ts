import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { formatMs, formatPretty, stderrFormat } from '../../../src/log/pretty.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-pretty-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = new Date(2026, 10, 27, 9, 5, 7).getTime();

describe('formatPretty', () => {
  it('writes one short line: clock, level, what it is about, the message, then the other fields', () => {
    const line = formatPretty(
      { level: 40, time: at, pid: 1, hostname: 'h', name: 'watch-demo', instance: 'demo', tick: 3, attempt: 2, msg: 'retrying after a transient error', reason: 'API error 529', delayMs: 10_000 },
      { color: false },
    );
    expect(line).toBe('09:05:07 WARN  demo tick 3 attempt 2: retrying after a transient error · reason="API error 529" delay=10s\n');
  });

  it('leaves out the first attempt and shows an error by its message, not its stack', () => {
    const line = formatPretty({ level: 50, time: at, tick: 1, attempt: 1, msg: 'the tick failed', err: { type: 'Error', message: 'boom\n    at x', stack: 'Error: boom\n    at x', code: 'ENOENT' } }, { color: false });
    expect(line).toBe('09:05:07 ERROR tick 1: the tick failed · error="ENOENT: boom"\n');
  });

  it('shows control characters as visible escapes and indents a newline in a message', () => {
    const line = formatPretty({ level: 30, time: at, msg: 'paused: \u001b]52;c;Y3VybA==\u0007 now\n09:00:00 INFO  forged', reason: 'a\u009b2Jb' }, { color: true });
    for (const raw of ['\u0007', '\u009b', '\u001b]']) expect(line).not.toContain(raw);
    expect(line).toContain('\\u001b]52;c;Y3VybA==\\u0007 now\n    09:00:00 INFO  forged');
    expect(line).toContain('reason="a\\u009b2Jb"');
    expect(line.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('colours only the clock and the level, and only when asked', () => {
    const plain = formatPretty({ level: 30, time: at, msg: 'hi' }, { color: false });
    const coloured = formatPretty({ level: 30, time: at, msg: 'hi' }, { color: true });
    expect(plain).toBe('09:05:07 INFO  hi\n');
    expect(coloured).toBe('\u001b[2m09:05:07\u001b[0m \u001b[36mINFO \u001b[0m hi\n');
  });

  it('clips a long value (the file keeps it whole)', () => {
    const line = formatPretty({ level: 30, time: at, msg: 'x', output: 'y'.repeat(1000) }, { color: false });
    expect(line.length).toBeLessThan(200);
    expect(line).toContain('…');
  });
});

describe('stderrFormat', () => {
  it('is pretty on a terminal, JSON for files and pipes, and AGENT_KERNEL_LOG_FORMAT wins', () => {
    expect(stderrFormat({}, true)).toBe('pretty');
    expect(stderrFormat({}, false)).toBe('json');
    expect(stderrFormat({ AGENT_KERNEL_LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(stderrFormat({ AGENT_KERNEL_LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });
});

describe('formatMs', () => {
  it.each([
    [950, '950ms'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [90_000, '1m30s'],
    [600_000, '10m'],
    [7_260_000, '2h01m'],
  ])('%d ms is %s', (ms, text) => expect(formatMs(ms)).toBe(text));
});

describe('log lines have each key once', () => {
  it('a binding repeated in a call is written once, with the call value', async () => {
    const logger = createLogger({ process: 'tick', logDir: dir, stderr: false });
    logger.child({ attempt: 1, tick: 4 }).warn({ attempt: 2 }, 'again');
    const line = (await readFile(path.join(dir, 'tick.log'), 'utf8')).trim();
    expect(line.match(/"attempt"/g)).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ attempt: 2, tick: 4, msg: 'again' });
  });
});
