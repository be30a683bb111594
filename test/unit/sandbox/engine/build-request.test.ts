import { describe, expect, it } from 'vitest';
import { podmanBuildNetwork } from '../../../../src/sandbox/engine/build-request.js';
import type { Engine } from '../../../../src/sandbox/engine/engine.js';

/** Only `getContainer(name).inspect()` is asked of the engine. */
function engineWith(containers: Record<string, { Running: boolean; Pid: number }>): Engine {
  return {
    name: 'podman',
    docker: {
      getContainer: (name: string) => ({
        inspect: async () => {
          const state = containers[name];
          if (!state) throw Object.assign(new Error('no such container'), { statusCode: 404 });
          return { State: state };
        },
      }),
    },
  } as unknown as Engine;
}

describe('podmanBuildNetwork', () => {
  const engine = engineWith({ link: { Running: true, Pid: 4242 }, stopped: { Running: false, Pid: 0 } });

  it('never leaves the RUN steps in the host namespace: none, a namespace of their own, or the link\'s by path', async () => {
    expect(await podmanBuildNetwork(engine, 'none')).toEqual({ nsoptions: '[{"Name":"network","Host":false,"Path":""}]', networkmode: 1 });
    expect(await podmanBuildNetwork(engine, undefined)).toEqual({ nsoptions: '[{"Name":"network","Host":false,"Path":""}]', networkmode: 2 });
    expect(await podmanBuildNetwork(engine, 'container:link')).toEqual({ nsoptions: '[{"Name":"network","Host":false,"Path":"/proc/4242/ns/net"}]', networkmode: 2 });
    for (const { nsoptions } of [await podmanBuildNetwork(engine, 'none'), await podmanBuildNetwork(engine, 'container:link')]) {
      expect((JSON.parse(nsoptions) as { Host: boolean }[]).every((option) => !option.Host)).toBe(true);
    }
  });

  it('refuses a link that is not running, or not there, rather than building without it', async () => {
    await expect(podmanBuildNetwork(engine, 'container:stopped')).rejects.toMatchObject({ code: 'IMAGE_BUILD_FAILED' });
    await expect(podmanBuildNetwork(engine, 'container:gone')).rejects.toMatchObject({ code: 'IMAGE_BUILD_FAILED' });
  });
});
