import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { ROOT, ensureBuilt, startHttpServe } from './helpers.js';

const run = promisify(execFile);
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'sdk-script.mjs');
const TOKEN = 'http-scripts-token-0123456789';

/**
 * Short scripts are not locked out: a client that goes away (the SDK's client.close(), the
 * script's exit: no DELETE) gives its session and the agent's role back at once. Before, the
 * second script observed (the role was held 5 minutes) and the 17th was refused (16 sessions
 * open for 30 minutes).
 */
describeWithEngine('20 short SDK scripts in a row against serve --http', () => {
  let test: TestInstance;
  let serve: Awaited<ReturnType<typeof startHttpServe>>;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    serve = await startHttpServe(test.dataDir, [], { AGENT_KERNEL_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await serve?.stop();
    await test?.cleanup();
  });

  it('each gets the agent role within 2 s, and no session is left behind', { timeout: 300_000 }, async () => {
    // The first login starts the container: not one of the 20.
    await run(process.execPath, [SCRIPT, serve.url, TOKEN], { cwd: ROOT });
    for (let i = 1; i <= 20; i++) {
      const { stdout } = await run(process.execPath, [SCRIPT, serve.url, TOKEN], { cwd: ROOT });
      const answer = JSON.parse(stdout) as { role: string | null; isError: boolean; text: string; ms: number };
      expect(answer, `script ${i}: ${answer.text}`).toMatchObject({ role: 'agent', isError: false });
      expect(answer.ms, `script ${i}`).toBeLessThan(2000);
    }
    await expect.poll(() => /HTTP session closed.*"sessions":0|"sessions":0.*HTTP session closed/.test(serve.stderr()), { timeout: 10_000 }).toBe(true);
  });
});
