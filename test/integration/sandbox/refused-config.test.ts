import { afterEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { LABEL } from '../../../src/sandbox/engine/image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { engineAvailable } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

describe('refused configs never reach the engine', () => {
  let test: TestInstance | undefined;
  afterEach(async () => {
    await test?.cleanup();
    test = undefined;
  });

  it.each([
    ['privileged', { privileged: true }, /container\.privileged/],
    ['the docker socket', { mounts: [{ source: '/var/run/docker.sock', target: '/var/run/docker.sock' }] }, /container\.mounts: extra mounts are refused/],
    ['a host path', { mounts: [{ source: '/etc', target: '/mnt/etc' }] }, /extra mounts are refused/],
    ['a folder of the data dir', { mounts: [{ source: 'system', target: '/mnt/system' }] }, /extra mounts are refused/],
  ])('%s', async (_, container, message) => {
    test = await createTestInstance({ config: { container } });
    const error = await openSandbox(test.instance, { logger: silentLogger() }).catch((e: unknown) => e);
    expect(isCodedError(error, 'CONFIG_REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(message);
    if (engineAvailable()) {
      const engine = await connectEngine();
      const made = await engine.docker.listContainers({ all: true, filters: { label: [`${LABEL.instance}=${test.name}`] } });
      const images = await engine.docker.listImages({ filters: { label: [`${LABEL.instance}=${test.name}`] } });
      expect(made).toEqual([]);
      expect(images).toEqual([]);
    }
  });
});
