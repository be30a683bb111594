import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import pty from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../../src/observe/events/event-log.js';
import type { InstanceEvent } from '../../../src/observe/events/event-schema.js';
import type { TerminalObserver } from '../../../src/observe/terminal-observer.js';
import { recordTerminals } from '../../../src/server/terminals/record-terminals.js';
import { type Terminals, startTerminals, waitFor } from '../tty/helpers/terminals.js';
import { pollUntil } from '../../helpers/poll.js';

/** `asciinema cat` wants a terminal: run it in a PTY. */
function asciinemaCat(file: string): Promise<string> {
  return new Promise((resolve) => {
    const child = pty.spawn('asciinema', ['cat', file], { cols: 120, rows: 40 });
    let out = '';
    child.onData((d) => (out += d));
    child.onExit(() => resolve(out));
  });
}

function hasAsciinema(): boolean {
  try {
    execFileSync('asciinema', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('recordings and events (host tmux)', () => {
  let t: Terminals;
  let recorder: TerminalObserver;
  beforeAll(async () => {
    t = await startTerminals('host');
    recorder = recordTerminals(t.manager, t.test.instance, 0);
  });
  afterAll(async () => {
    await t?.cleanup();
    await recorder?.close();
  });

  it('records a terminal as asciicast v2 with a marker per command, and logs opened, started, finished and closed', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.type({ tty, expect: 'bash', text: 'echo rec-$((6*7)); false' });
    await waitFor(t.manager, tty, (text) => text.includes('rec-42'));
    await t.manager.type({ tty, expect: 'bash', text: 'printf "\\xc3\\xa9t\\xc3\\xa9\\n"' });
    await waitFor(t.manager, tty, (text) => text.includes('été'));

    const paths = t.test.instance.paths;
    const file = path.join(paths.recordings, 'tty_0-tick-000.cast');
    const lines = await pollUntil(async () => {
      const text = await readFile(file, 'utf8').catch(() => '');
      return text.includes('exit 0') && text.split('\n').length > 4 ? text.trim().split('\n') : undefined;
    }, 'the recording with the second command', { timeoutMs: 10_000 });
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(header).toMatchObject({ version: 2, width: 120, height: 40 });
    const events = lines.slice(1).map((l) => JSON.parse(l) as [number, string, string]);
    let last = 0;
    for (const [time, code, data] of events) {
      expect(typeof data).toBe('string');
      expect(['o', 'm', 'r']).toContain(code);
      expect(time).toBeGreaterThanOrEqual(last);
      last = time;
    }
    const output = events.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
    expect(output).toContain('rec-42');
    expect(output).toContain('été');
    const markers = events.filter((e) => e[1] === 'm').map((e) => e[2]);
    expect(markers).toContain('$ echo rec-$((6*7)); false');
    expect(markers.some((m) => m.startsWith('exit 1'))).toBe(true);
    expect(markers.some((m) => m.startsWith('$ printf'))).toBe(true);

    if (hasAsciinema()) {
      expect(await asciinemaCat(file)).toContain('rec-42');
    } else if (process.env.CI === 'true') {
      throw new Error('asciinema is not installed (scripts/setup.sh installs it)');
    }

    await t.manager.close(tty);
    const logged = await pollUntil(async () => {
      const { events: all } = await readEvents(paths.events);
      return all.some((e) => e.type === 'tty.closed') ? all : undefined;
    }, 'tty.closed in the event log', { timeoutMs: 10_000 });
    const types = logged.map((e: InstanceEvent) => e.type);
    expect(types[0]).toBe('tty.opened');
    const finished = logged.filter((e) => e.type === 'command.finished');
    expect(finished[0]).toMatchObject({ tty: 0, command: 'echo rec-$((6*7)); false', exitCode: 1, recording: file });
    expect(types).toContain('command.started');
    expect(types.at(-1)).toBe('tty.closed');
    expect(await readdir(paths.recordings)).toEqual(['tty_0-tick-000.cast']);
  });
  it('points only at a recording that exists: after a new tick with no output yet, the last one written (never a file to be)', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.type({ tty, expect: 'bash', text: 'echo before-the-tick' });
    await waitFor(t.manager, tty, (text) => text.includes('before-the-tick'));
    const before = recorder.recordingPath(tty);
    recorder.setTick(recorder.currentTick() + 4);
    const named = recorder.recordingPath(tty);
    expect(named).toBe(before);
    await pollUntil(() => existsSync(named!), `${named} to exist`, { timeoutMs: 5000 });
    await t.manager.close(tty);
  });
});
