import { describe, expect, it } from 'vitest';
import { ContextTracker, contextUsed, contextWindowFor, wrapUpMessage } from '../../../../src/runner/session/context.js';

describe('context math', () => {
  it.each([
    [{ input_tokens: 3, cache_creation_input_tokens: 2000, cache_read_input_tokens: 15000, output_tokens: 500 }, 17003],
    [{ input_tokens: 100 }, 100],
    [{}, 0],
  ])('contextUsed(%j) = %d (output tokens do not count)', (usage, expected) => {
    expect(contextUsed(usage)).toBe(expected);
  });

  it.each([
    [{ reported: 1_000_000, configured: 100_000, model: 'x' }, 1_000_000],
    [{ configured: 100_000, model: 'claude-opus-4-8[1m]' }, 100_000],
    [{ model: 'claude-opus-4-8[1m]' }, 1_000_000],
    [{ model: 'claude-sonnet-4-5' }, 200_000],
    [{}, 200_000],
  ])('contextWindowFor(%j) = %d', (options, expected) => {
    expect(contextWindowFor(options)).toBe(expected);
  });

  it('follows the latest main-thread message, ignoring sub-agents and synthetic zeros', () => {
    const tracker = new ContextTracker({ wrapUpRatio: 0.7 });
    tracker.observeAssistant({ input_tokens: 10, cache_read_input_tokens: 100_000 }, true);
    tracker.observeAssistant({ input_tokens: 190_000 }, false);
    tracker.observeAssistant({ input_tokens: 0 }, true);
    expect(tracker.snapshot()).toEqual({ used: 100_010, window: 200_000, ratio: 100_010 / 200_000 });
    expect(tracker.shouldWrapUp()).toBe(false);
    tracker.observeAssistant({ input_tokens: 4, cache_creation_input_tokens: 40_000, cache_read_input_tokens: 100_000 }, true);
    expect(tracker.shouldWrapUp()).toBe(true);
  });

  it('measures against the window the harness reports once known', () => {
    const tracker = new ContextTracker({ wrapUpRatio: 0.7 });
    tracker.observeAssistant({ input_tokens: 150_000 }, true);
    expect(tracker.shouldWrapUp()).toBe(true);
    tracker.observeWindow(1_000_000);
    expect(tracker.shouldWrapUp()).toBe(false);
  });

  it('tells the agent how full the context is and what to do', () => {
    const text = wrapUpMessage({ used: 140_000, window: 200_000, ratio: 0.7 });
    expect(text).toContain('70%');
    expect(text).toContain('140,000 of 200,000');
    expect(text).toMatch(/close the terminals/);
  });
});

describe('the model the harness reports', () => {
  it('sets the window when neither the harness nor the config gave one', () => {
    const tracker = new ContextTracker({ wrapUpRatio: 0.7, model: 'opus' });
    tracker.observeAssistant({ input_tokens: 300_000 }, true);
    expect(tracker.snapshot().window).toBe(200_000);
    tracker.observeModel('claude-opus-4-8[1m]');
    expect(tracker.snapshot()).toMatchObject({ window: 1_000_000, ratio: 0.3 });
    tracker.observeModel('<synthetic>');
    expect(tracker.snapshot().window).toBe(1_000_000);
  });
});
