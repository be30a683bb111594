import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { MAX_LINE_BYTES, TmuxControlClient } from '../../../src/tty/host/control-client.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

/**
 * The agent is root in its container: it can put any program where tmux was, and the host's
 * control client (the kernel's, the server's) then reads what that program prints. A line
 * that never ends must not grow the host process without end: the client holds at most
 * MAX_LINE_BYTES of it, then closes as a client that is not tmux.
 */
describeWithEngine('escape: a program posing as tmux in the container', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it.each([
    ['one line without a newline', `head -c ${MAX_LINE_BYTES + 8 * 1024 * 1024} /dev/zero | tr '\\000' a`],
    ['a %output line without its newline', `printf '%%output %%0 '; head -c ${MAX_LINE_BYTES + 8 * 1024 * 1024} /dev/zero | tr '\\000' 'b'`],
    ['honest lines, then one that never ends', `printf '%%begin 1 1 0\\n%%end 1 1 0\\n'; head -c ${MAX_LINE_BYTES + 8 * 1024 * 1024} /dev/zero | tr '\\000' c`],
  ])('%s: the client closes once it holds the limit, not at the end of the stream', { timeout: 120_000 }, async (_what, script) => {
    // It keeps the pipe open afterwards, as a program that means to go on would.
    const fake = await sandbox.spawn(['sh', '-c', `${script}; sleep 600`]);
    const client = new TmuxControlClient(fake, silentLogger());
    const reason = await new Promise<string>((resolve) => client.once('exit', resolve));
    expect(reason).toMatch(/without a newline, which tmux never does/);
    expect(client.closed).toBe(true);
  });
});
