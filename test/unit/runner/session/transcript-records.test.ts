import { describe, expect, it } from 'vitest';
import { stampLine } from '../../../../src/runner/session/transcript-records.js';

describe('stampLine', () => {
  const at = new Date('2026-11-27T01:02:03.456Z');
  it('puts the arrival time first in a JSON object line and keeps the rest as it was', () => {
    const line = '{"type":"assistant","message":{"content":[]}}';
    const stamped = stampLine(line, at);
    expect(JSON.parse(stamped)).toEqual({ received_at: '2026-11-27T01:02:03.456Z', ...(JSON.parse(line) as object) });
  });
  it('leaves a line that is not a JSON object alone', () => {
    expect(stampLine('not json', at)).toBe('not json');
    expect(stampLine('[1,2]', at)).toBe('[1,2]');
    expect(stampLine('{}', at)).toBe('{}');
  });
});
