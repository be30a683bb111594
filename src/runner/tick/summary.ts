import type { TickOutcome } from './tick.js';

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes}m${String(seconds % 60).padStart(2, '0')}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** Pure: what `kernel-runner tick` prints: one line, and for a paused instance the steps that fix it. */
export function formatTickSummary(name: string, outcome: TickOutcome): string {
  const tokens = outcome.tokens.input + outcome.tokens.output + outcome.tokens.cache_creation + outcome.tokens.cache_read;
  const parts = [
    `${name} tick ${outcome.tick}: ${outcome.status}${outcome.errorClass ? ` (${outcome.errorClass})` : ''} in ${duration(outcome.durationMs)}`,
    `${tokens.toLocaleString('en-US')} tokens`,
    `$${outcome.costUsd.toFixed(2)}`,
  ];
  if (outcome.attempts > 1) parts.push(`${outcome.attempts} attempts`);
  if (outcome.error) parts.push(outcome.error.split('\n')[0] ?? '');
  if (outcome.retryAfterMs !== undefined) parts.push(`retry in ${duration(outcome.retryAfterMs)}`);
  parts.push(`log ${outcome.logFile}`);
  const line = parts.join(' · ');
  if (!outcome.paused) return line;
  const steps = outcome.fix ?? [`fix the cause, then: kernel-runner resume ${name}`];
  return [line, `${name} is paused: no tick runs until it is resumed. To fix it:`, ...steps.map((step) => `  ${step}`)].join('\n');
}
