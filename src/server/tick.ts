import { readFile } from 'node:fs/promises';
import type { Logger } from '../log/logger.js';

/** Pure: the tick number from the runner's `state.json` (`{"tick": N, ...}`); 0 when absent or odd. */
export function parseTick(input: unknown): number {
  if (typeof input !== 'object' || input === null) return 0;
  const tick = (input as { tick?: unknown }).tick;
  return typeof tick === 'number' && Number.isSafeInteger(tick) && tick >= 0 ? tick : 0;
}

/** Read the current tick from the runner's host-private `state.json`; a missing or broken file means tick 0. */
export async function loadTick(stateFile: string, logger?: Logger): Promise<number> {
  let text: string;
  try {
    text = await readFile(stateFile, 'utf8');
  } catch {
    return 0;
  }
  try {
    return parseTick(JSON.parse(text));
  } catch (error) {
    logger?.warn({ err: error, file: stateFile }, 'state.json is not valid JSON; reporting tick 0');
    return 0;
  }
}
