import { describe, expect, it } from 'vitest';
import { CodedError } from '../../../../src/errors.js';
import { silentLogger } from '../../../../src/log/logger.js';
import { TerminalsRuntime } from '../../../../src/server/terminals/runtime.js';
import { FakeTerminals } from '../fake-terminals.js';

describe('TerminalsRuntime', () => {
  it('starts once for every caller, and a failed start is tried again by the next caller', async () => {
    let starts = 0;
    const runtime = new TerminalsRuntime(() => {
      starts += 1;
      return starts === 1 ? Promise.reject(new CodedError('ENGINE_UNREACHABLE', 'down')) : Promise.resolve(new FakeTerminals());
    }, silentLogger());
    runtime.warmUp();
    await expect(runtime.terminals()).rejects.toThrow('down');
    const [a, b] = await Promise.all([runtime.terminals(), runtime.terminals()]);
    expect(a).toBe(b);
    expect(starts).toBe(2);
  });

  it('disposes terminals that were still starting when shutdown came, before dispose resolves', async () => {
    const fake = new FakeTerminals();
    let finishStart: (t: FakeTerminals) => void = () => undefined;
    const runtime = new TerminalsRuntime(() => new Promise((resolve) => (finishStart = resolve)), silentLogger());
    runtime.warmUp();
    const disposing = runtime.dispose();
    finishStart(fake);
    await disposing;
    expect(fake.disposed).toBe(true);
    await expect(runtime.terminals()).rejects.toMatchObject({ code: 'SHUTTING_DOWN', message: expect.stringMatching(/call login\(\) again/) });
  });
});
