import { describe, expect, it } from 'vitest';
import { tickLabel } from '../../../../src/server/tools/render.js';

describe('login: which tick the session works in', () => {
  it.each([
    [{ tick: 3, inTick: true }, 'tick 3'],
    [{ tick: 2, inTick: false }, 'between ticks (no tick runs; the last was tick 2)'],
    [{ tick: 0, inTick: false }, 'no tick (none has run yet)'],
  ])('%o: %s', (summary, label) => {
    expect(tickLabel(summary)).toBe(label);
  });
});
