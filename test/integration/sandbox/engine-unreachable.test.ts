import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorCommand } from '../../../src/cli/commands/agent-kernel/doctor.js';
import { EXIT } from '../../../src/cli/commands/command.js';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

describe('no engine answers', () => {
  let dir: string;
  let silent: net.Server;
  let silentSocket: string;
  const connections: net.Socket[] = [];
  let open = 0;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-dead-'));
    // A socket that accepts connections and never answers: the worst case for hanging.
    silentSocket = path.join(dir, 'silent.sock');
    silent = net.createServer((connection) => {
      connections.push(connection);
      open += 1;
      connection.once('close', () => (open -= 1));
      connection.resume();
    });
    await new Promise<void>((resolve) => silent.listen(silentSocket, resolve));
  });
  afterAll(async () => {
    for (const c of connections) c.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('a dead DOCKER_HOST gives ENGINE_UNREACHABLE naming the socket and how to start an engine', async () => {
    const dead = `unix://${dir}/nothing-here.sock`;
    const error = await connectEngine({ env: { DOCKER_HOST: dead } }).catch((e: unknown) => e);
    expect(isCodedError(error, 'ENGINE_UNREACHABLE')).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(dead);
    expect(message).toMatch(/sudo dockerd &/);
    expect(message).toMatch(/npm run setup/);
  });

  it('a socket that never answers times out instead of hanging', async () => {
    const error = await connectEngine({ env: { DOCKER_HOST: `unix://${silentSocket}` }, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(isCodedError(error, 'ENGINE_UNREACHABLE')).toBe(true);
    expect((error as Error).message).toMatch(/no answer within 300 ms/);
    // The request was aborted, not left hanging on the socket.
    await expect.poll(() => open).toBe(0);
  });

  it('engine_socket in the operator configuration wins, and openSandbox fails clearly', async () => {
    const test: TestInstance = await createTestInstance({ config: { container: { engine_socket: `${dir}/nothing-here.sock` } } });
    try {
      const error = await openSandbox(test.instance, { logger: silentLogger() }).catch((e: unknown) => e);
      expect(isCodedError(error, 'ENGINE_UNREACHABLE')).toBe(true);
      expect((error as Error).message).toContain(`unix://${dir}/nothing-here.sock`);
    } finally {
      await test.cleanup();
    }
  });

  it('doctor says so, with a fix, and exits 3', async () => {
    const saved = process.env.DOCKER_HOST;
    const write = process.stdout.write.bind(process.stdout);
    let output = '';
    process.env.DOCKER_HOST = `unix://${dir}/nothing-here.sock`;
    process.stdout.write = ((chunk: string) => {
      output += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await doctorCommand.run([])).toBe(EXIT.NOT_READY);
    } finally {
      process.stdout.write = write;
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
    expect(output).toMatch(/MISSING\s+engine\s+nothing answered: unix:\/\/.*nothing-here\.sock/);
    expect(output).toMatch(/fix: npm run setup/);
  });
});
