import { describe, expect, it } from 'vitest';
import { describeLastTick, formatStatusTable, fromLive, withSuspended } from '../../../../../src/runner/watch/service/status-view.js';
import type { AgentStatus } from '../../../../../src/runner/watch/service/status-api.js';
import { parseState } from '../../../../../src/state/runner-state.js';

const NOW = Date.parse('2026-12-06T04:45:00Z');
const live: AgentStatus = {
  name: 'scout',
  dataDir: '/home/a/scout-with-a-rather-long-data-directory-name/and/deeper/still',
  harness: 'claude-code',
  state: 'retrying',
  running: true,
  paused: false,
  reason: 'attempt 1 of 6 failed: API Error: Unable to connect to API (ConnectionRefused); next try at 2026-12-06T04:45:09.512Z, retries end by 2026-12-06T05:14:58.000Z',
  currentTick: { number: 3, started: '2026-12-06T04:44:58.000Z', trigger: 'message' },
  nextWake: { time: '2026-12-06T04:45:09.512Z', reason: 'retry 2 of 6' },
  restarts: 0,
  failures: 0,
  pendingMessages: 1,
  watchPid: 4242,
  watchStarted: '2026-12-06T04:40:00.000Z',
  kernel: { state: 'ready', pid: 77, uptimeSeconds: 300, terminals: 3, terminalsState: 'ready', rssBytes: 96 * 1048576, restarts: 0 },
};
// Two ticks ran before this watch started.
const recorded = parseState({
  tick: 2,
  last: { tick: 2, started: '2026-12-06T04:30:00.000Z', duration_ms: 65_000, status: 'failed', error_class: 'fatal', error: 'x' },
  history: [],
});

describe('kernel-runner status', () => {
  it("shows the last tick a watch did not run itself (state.json's), ended when ls says", () => {
    const row = fromLive(live, recorded);
    expect(row.last).toBe('#2 failed (fatal) ended 2026-12-06T04:31:05.000Z');
    expect(describeLastTick(recorded.last!)).toBe(row.last);
  });

  it('fits 100 columns (and a narrower terminal), wrapping the reason, losing nothing', () => {
    for (const width of [100, 72]) {
      const text = formatStatusTable([fromLive(live, recorded)], { width, now: NOW });
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(width);
      expect(text.split('\n')[0]).toBe('scout: retrying (watch pid 4242)');
      expect(text).toMatch(/next wake +04:45:09Z \(retry 2 of 6\)/);
      expect(text).toMatch(/last tick +#2 failed \(fatal\) ended 04:31:05Z/);
      expect(text.replace(/\n +/g, ' ').replace(/why +/, 'why ')).toContain('why attempt 1 of 6 failed: API Error: Unable to connect to API (ConnectionRefused); next try at 04:45:09Z, retries end by 05:14:58Z');
    }
  });
});

describe('withSuspended', () => {
  const record = { snapshot: '9', at: '2026-12-06T05:02:11Z' };
  it.each([
    ['idle', 'suspended'],
    ['not watched', 'suspended'],
    ['ticking', 'ticking'],
    ['paused', 'paused'],
    ['retrying', 'retrying'],
  ])('a suspended instance that is %s shows as %s', (state, shown) => {
    const row = withSuspended({ name: 'scout', dataDir: '/d', state }, record);
    expect(row.state).toBe(shown);
    if (shown === 'suspended') expect(row.reason).toBe('since 2026-12-06T05:02:11Z, its container saved in snapshot 9; a message, a wake or kernel-runner resume scout brings it back');
  });
  it('leaves an instance that is not suspended as it is', () => {
    expect(withSuspended({ name: 'scout', dataDir: '/d', state: 'idle' }, undefined)).toEqual({ name: 'scout', dataDir: '/d', state: 'idle' });
  });
});
