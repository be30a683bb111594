import { describe, expect, it } from 'vitest';
import { BLOCK_COMPACTION, decideStop } from '../../../../src/runner/hooks/hook-policy.js';

describe('decideStop', () => {
  it.each([
    ['nothing to fix: stop', [], 0, 'allow'],
    ['issues, first reminder: block', ['Terminal 3 is still open'], 0, 'block'],
    ['issues, last reminder: block', ['Terminal 3 is still open'], 2, 'block'],
    ['issues after every reminder: give up, the tick ends', ['Terminal 3 is still open'], 3, 'give-up'],
    ['nothing to fix after reminders: stop', [], 3, 'allow'],
  ] as const)('%s', (_what, issues, blocks, kind) => {
    expect(decideStop(issues, blocks, 3).kind).toBe(kind);
  });

  it('blocks with every issue listed and which reminder it is', () => {
    const decision = decideStop(['a', 'b'], 1, 3);
    expect(decision.kind).toBe('block');
    const reply = JSON.parse(decision.kind === 'block' ? (decision.reply.stdout ?? '') : '{}') as { decision: string; reason: string };
    expect(reply).toEqual({ decision: 'block', reason: 'Before you end this tick, fix these (reminder 2 of 3):\n- a\n- b' });
  });

  it('always blocks compaction', () => {
    expect(JSON.parse(BLOCK_COMPACTION.stdout ?? '')).toMatchObject({ decision: 'block' });
  });
});
