/** Small statistics and formatting helpers for the benchmark tables. */

export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summary(values) {
  return { n: values.length, median: median(values), p95: percentile(values, 95), min: Math.min(...values), max: Math.max(...values), runs: values };
}

export function ms(value) {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`;
}

export function mb(bytes) {
  return `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`;
}

export function rate(bytes, milliseconds) {
  return bytes / 1e6 / (milliseconds / 1000);
}

/** "12.3x" (how many times the baseline), or "0.45x". */
export function ratio(value, baseline) {
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return 'n/a';
  const r = value / baseline;
  return `${r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(1) : r.toFixed(2)}x`;
}

export function sleep(milliseconds) {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Poll `check` until it returns a truthy value (or throw after `timeoutMs`). */
export async function pollUntil(check, { timeoutMs = 30_000, intervalMs = 20, what = 'a condition' } = {}) {
  const began = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - began > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
