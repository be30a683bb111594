import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { closeAll } from './helpers/suite-steps.js';
import { type Backend, type Terminals, startTerminals } from './helpers/terminals.js';
import { terminalIoTests } from './terminal-io.suite.js';
import { terminalLifecycleTests } from './terminal-lifecycle.suite.js';

/** The terminal tests, on one backend. */
export function defineTerminalTests(backend: Backend, describeFn: typeof describe = describe): void {
  describeFn(`terminals (${backend})`, () => {
    let t: Terminals;
    beforeAll(async () => {
      t = await startTerminals(backend);
    });
    afterAll(async () => {
      await t?.cleanup();
    });
    afterEach(async () => {
      // A failed test must not leave terminals (or unseen output) to the next one.
      if (t.manager.disposed) await t.restart();
      await closeAll(t);
    });

    terminalIoTests(() => t);
    terminalLifecycleTests(() => t, backend);
  });
}
