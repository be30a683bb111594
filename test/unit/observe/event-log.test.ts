import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog, followEvents, readEvents } from '../../../src/observe/events/event-log.js';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-events-'));
  file = path.join(dir, 'events.jsonl');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('followEvents', () => {
  it('keeps one abort listener however long it follows (10 minutes of 100 ms polls), and prints no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const stop = new AbortController();
    let polls = 0;
    let most = 0;
    const following = followEvents(file, 0, () => {}, stop.signal, { pollMs: 0, onIdle: () => {
      polls++;
      most = Math.max(most, getEventListeners(stop.signal, 'abort').length);
      if (polls >= 6000) stop.abort();
    } });
    await following;
    process.off('warning', onWarning);
    expect(polls).toBeGreaterThanOrEqual(6000);
    expect(most).toBeLessThanOrEqual(1);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('EventLog rotation', () => {
  /** A line of `chars` characters of which most take 3 bytes in UTF-8. */
  const wide = (n: number) => '界'.repeat(n);

  it('rotates by bytes, not characters: with multi-byte text the file never passes the cap', async () => {
    const max = 4096;
    const log = new EventLog(file, () => undefined, { maxBytes: max });
    for (let i = 0; i < 40; i++) {
      log.emit({ type: 'tty.opened', tty: 0, command: `${i} ${wide(100)}` });
      await log.flush();
      const size = (await stat(file)).size;
      expect(size).toBeLessThanOrEqual(max);
    }
  });

  it('loses nothing when several writers (server, runner, web) cross the cap at once: no fresh file is renamed over .1', async () => {
    const max = 8192;
    for (let round = 0; round < 40; round++) {
      await rm(file, { force: true });
      await rm(`${file}.1`, { force: true });
      const writers = Array.from({ length: 12 }, () => new EventLog(file, () => undefined, { maxBytes: max }));
      // Fill close to the cap, then every writer appends at once, twice.
      const filler = new EventLog(file, () => undefined, { maxBytes: max });
      let n = 0;
      while ((await stat(file).then((s) => s.size, () => 0)) < max - 600) {
        filler.emit({ type: 'tty.opened', tty: 0, command: `fill ${n++} ${'x'.repeat(200)}` });
        await filler.flush();
      }
      const sent: string[] = [];
      await Promise.all(
        writers.map(async (log, w) => {
          for (let k = 0; k < 3; k++) {
            // Staggered by a few ms: a late writer finds the file a fast one has just started afresh.
            await new Promise((r) => setTimeout(r, (w * 7 + k * 3) % 5));
            const command = `w${w}-${k} ${'y'.repeat(150)}`;
            sent.push(command);
            log.emit({ type: 'tty.opened', tty: 0, command });
            await log.flush();
          }
        }),
      );
      const { events } = await readEvents(file);
      const kept = new Set(events.map((e) => (e.type === 'tty.opened' ? e.command : '')));
      expect(sent.filter((c) => !kept.has(c)), `round ${round}: lost events`).toEqual([]);
      const previous = await readFile(`${file}.1`, 'utf8').catch(() => '');
      // What was rotated is a full file, never a fresh one that another writer had just started.
      if (previous) expect(Buffer.byteLength(previous)).toBeGreaterThanOrEqual(max - 600);
    }
  });
});
