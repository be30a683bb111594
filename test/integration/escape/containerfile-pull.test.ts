import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { imageExists } from '../../../src/sandbox/engine/image.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { GIT_TEST_IMAGE } from '../../helpers/git-image.js';
import { TEST_IMAGE, type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 240_000 });

/**
 * The agent edits its own Containerfile, and the engine's daemon pulls an image it lacks itself,
 * from the host's network namespace: a registry name the agent writes is a DNS question and HTTP
 * requests to wherever it says, the host's loopback included, whatever container.network says.
 * A registry-like server on the host's loopback (which the container cannot reach) must never be
 * asked, however the Containerfile names an image from it; images the engine has and earlier
 * stages still build.
 */
describeWithEngine('escape: a Containerfile that makes the engine pull from a registry it names', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let server: http.Server;
  let registry: string;
  const asked: string[] = [];
  let connections = 0;

  /** The agent writes its Containerfile from inside (printf keeps every byte). */
  async function writeContainerfile(text: string): Promise<void> {
    const file = path.join(test.dataDir, 'system/container/Containerfile');
    const result = await sandbox.run(['sh', '-c', 'printf "%s" "$1" > "$2"', 'sh', text, file]);
    expect(result.exitCode).toBe(0);
  }

  beforeAll(async () => {
    // Answers like a registry (API v2, no auth), so a daemon that asked would go on to ask for manifests.
    server = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
      res.statusCode = req.url === '/v2/' ? 200 : 404;
      res.end('{}');
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    registry = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The operator lets it start from the test image only (not the git one, which the engine also has).
    test = await createTestInstance({ config: { container: { network: 'none', base_images: [TEST_IMAGE] } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
    await new Promise((resolve) => server?.close(resolve));
  });

  const spellings: Array<[string, (r: string) => string, RegExp]> = [
    ['FROM', (r) => `FROM ${r}/x:y`, /FROM 127\.0\.0\.1:\d+\/x:y: that image is not one the agent's Containerfile may use.*container\.base_images/s],
    ['lower case, named stage', (r) => `from ${r}/x:y as build\nFROM ${TEST_IMAGE}\nCOPY --from=build /a /a`, /not one the agent's Containerfile may use/],
    ['a FROM continued over lines with a comment and a blank line', (r) => `FROM \\\n# c\n\n  ${r}/x:y`, /not one the agent's Containerfile may use/],
    ['COPY --from an image', (r) => `FROM ${TEST_IMAGE}\nCOPY --from=${r}/x:y /etc/hostname /h`, /COPY --from 127\.0\.0\.1:\d+\/x:y: that image is not one/],
    ['COPY --from in JSON form, after a stage', (r) => `FROM ${TEST_IMAGE} AS a\nFROM ${TEST_IMAGE}\nCOPY --from=a /etc/hostname /a\ncopy --chown=0:0 --from=${r}/x ["/etc/hostname", "/h"]`, /not one the agent's Containerfile may use/],
    ['RUN --mount from an image', (r) => `FROM ${TEST_IMAGE}\nRUN --mount=type=bind,from=${r}/x:y,target=/m true`, /RUN takes no flag here/],
    ['an ARG default', (r) => `ARG BASE=${r}/x:y\nFROM $BASE`, /FROM \$BASE: name the image as it is/],
    ['an ARG in braces', (r) => `ARG BASE=${r}/x:y\nFROM \${BASE}`, /name the image as it is/],
    ['--platform', () => `FROM --platform=linux/arm64 ${TEST_IMAGE}`, /--platform=linux\/arm64: FROM takes no flag here/],
    ['a syntax directive', (r) => `# syntax=${r}/frontend:1\nFROM ${TEST_IMAGE}`, /# syntax=.*: a build frontend image/],
    ['ONBUILD COPY --from', (r) => `FROM ${TEST_IMAGE}\nONBUILD COPY --from=${r}/x:y /a /a`, /ONBUILD COPY --from/],
    ['a quoted FROM', () => `FROM "${TEST_IMAGE}"`, /FROM "agent-kernel-test\/base:current": name the image as it is/],
    ['another image the engine has', () => `FROM ${TEST_IMAGE}\nCOPY --from=${GIT_TEST_IMAGE} /etc/hostname /h`, /COPY --from agent-kernel-test\/git:current: that image is not one/],
  ];

  it.each(spellings)('refuses an image from a registry it names (%s) before the engine sees it, and the registry is never asked', async (_what, text, message) => {
    await writeContainerfile(`${text(registry)}\n`);
    const engine = await connectEngine();
    const outcome = await ensureImage(engine, await test.reload(), { logger: silentLogger() }).then(
      () => 'built',
      (error: Error) => error.message,
    );
    expect(asked).toEqual([]);
    expect(connections).toBe(0);
    expect(outcome).toMatch(message);
  });

  it('still builds from an image the engine has and from earlier stages (by name and index)', async () => {
    await writeContainerfile(
      `FROM ${TEST_IMAGE} AS one\nRUN echo one > /one\nFROM one\nCOPY --from=one /one /two\nCOPY --from=0 /one /three\nRUN cat /two /three\n`,
    );
    const engine = await connectEngine();
    const image = await ensureImage(engine, await test.reload(), { logger: silentLogger() });
    expect(await imageExists(engine, image.tag)).toBe(true);
    expect(connections).toBe(0);
  });

  it('never uses an image carrying an agent-kernel.* label the host did not set (prune would take the container for an egress one)', async () => {
    await writeContainerfile(`FROM ${TEST_IMAGE}\nLABEL agent-kernel.egress-role=proxy agent-kernel.instance=someone-else\n`);
    const engine = await connectEngine();
    const instance = await test.reload();
    const error = await ensureImage(engine, instance, { logger: silentLogger() }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/carries agent-kernel\.egress-role: that label is the host's own/);
    // The refused image is gone: no container can be created from it.
    expect(await imageExists(engine, (error as { details?: { tag?: string } }).details?.tag ?? '?')).toBe(false);
  });
});
