import { describe, inject } from 'vitest';

/** What test/helpers/global-setup.ts found out about the container engine, once per run. */
export interface EngineAvailability {
  available: boolean;
  /** "docker 20.10.24 (API 1.41) at unix:///var/run/docker.sock", or why there is none. */
  description: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    engine: EngineAvailability;
  }
}

/** True when container tests can run (a real engine answered and the base image is there). */
export function engineAvailable(): boolean {
  return inject('engine').available;
}

/**
 * `describe` for tests that need the real engine. Outside CI, with no engine, they are
 * skipped (global-setup printed why and how to fix it); in CI global-setup fails the run instead.
 */
export const describeWithEngine: typeof describe = ((...args: Parameters<typeof describe>) =>
  describe.skipIf(!engineAvailable())(...args)) as typeof describe;
