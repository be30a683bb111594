import { writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { loadState } from '../../../src/state/runner-state.js';
import { startTick } from '../../../src/runner/tick/tick.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { FAKE_CLAUDE } from './tick-helpers.js';

/** What a tick refuses before it starts anything (no container needed): nothing is recorded. */
describe('startTick refusals', () => {
  let t: TestInstance | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('refuses a missing harness binary, naming it and the setting to change', async () => {
    t = await createTestInstance({ config: { runner: { command: '/nonexistent/claude' } } });
    const error = await startTick(t.instance, { logger: silentLogger() }).catch((e: unknown) => e);
    expect(isCodedError(error, 'HARNESS_MISSING')).toBe(true);
    expect((error as Error).message).toBe(
      `The claude-code harness needs "/nonexistent/claude", which is not an executable file. Install it, or set runner.command to its path in ${t.instance.paths.operatorConfig}.`,
    );
    const instance = { ...t.instance, config: { ...t.instance.config, runner: { ...t.instance.config.runner, command: undefined } } };
    const onPath = await startTick(instance, { logger: silentLogger(), env: { PATH: '/nonexistent' } }).catch((e: unknown) => e);
    expect((onPath as Error).message).toContain('needs "claude", which is not on PATH');
    expect((await loadState(t.instance.paths.state)).tick).toBe(0);
  });

  it('refuses a paused instance and records no tick', async () => {
    t = await createTestInstance({ config: { runner: { command: FAKE_CLAUDE } } });
    await writeFile(t.instance.paths.paused, 'Credit balance is too low\n');
    const error = await startTick(t.instance, { logger: silentLogger() }).catch((e: unknown) => e);
    expect(isCodedError(error, 'INSTANCE_PAUSED')).toBe(true);
    expect((error as Error).message).toBe(
      `Instance "${t.name}" is paused: Credit balance is too low. Fix the cause (agent-kernel doctor ${t.name} shows how), then: kernel-runner resume ${t.name}`,
    );
    expect((await loadState(t.instance.paths.state)).tick).toBe(0);
  });

});
