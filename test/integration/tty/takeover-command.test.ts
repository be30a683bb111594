import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Terminals, startTerminals, waitFor } from './helpers/terminals.js';

/**
 * A server that takes over terminals another left running names the first command typed
 * into each (recordings mark it, the web view and events show it); it was an empty name.
 */
describe('the first command after a takeover', () => {
  let t: Terminals;
  beforeAll(async () => {
    t = await startTerminals('host');
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('is named like every other command', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.type({ tty, expect: 'bash', text: 'echo before-takeover' });
    await waitFor(t.manager, tty, (text) => text.includes('before-takeover'));
    await t.manager.dispose();

    const manager = await t.restart();
    const started: string[] = [];
    manager.events.onCommandStarted(({ command }) => started.push(command));
    await manager.wait({ timeoutMs: 1000 });
    await manager.type({ tty, expect: 'bash', text: 'echo first-after-takeover' });
    await waitFor(manager, tty, (text) => text.includes('first-after-takeover'));
    await manager.type({ tty, expect: 'bash', text: 'echo second' });
    await waitFor(manager, tty, (text) => /^second$/m.test(text));
    expect(started).toEqual(['echo first-after-takeover', 'echo second']);
  });
});
