import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DockerodeClient } from '../../../../src/sandbox/engine/dockerode.js';

const require = createRequire(import.meta.url);
const loaded = (pattern: RegExp): string[] => Object.keys(require.cache).filter((file) => pattern.test(file));

describe('dockerode as the server loads it', () => {
  it('starts without gRPC, protobuf or ssh2, and still reaches an ssh:// engine through ssh2', async () => {
    expect(typeof DockerodeClient).toBe('function');
    expect(loaded(/node_modules\/(@grpc|protobufjs|ssh2)\//)).toEqual([]);

    // Nothing listens on port 1: the refusal must come from ssh2's client, loaded on this first use.
    const docker = new DockerodeClient({ protocol: 'ssh', host: '127.0.0.1', port: 1, username: 'nobody' } as ConstructorParameters<typeof DockerodeClient>[0]);
    const error = await docker.ping().then(
      () => undefined,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe('ECONNREFUSED');
    expect(loaded(/node_modules\/ssh2\//).length).toBeGreaterThan(0);
    expect(loaded(/node_modules\/@grpc\//)).toEqual([]);
  });
});
