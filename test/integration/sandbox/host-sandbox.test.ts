import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { HostSandbox } from '../../../src/sandbox/host-sandbox.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { createTestInstance } from '../../helpers/test-instance.js';

describe('HostSandbox (this machine)', () => {
  let dir: string;
  let sandbox: HostSandbox;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-host-'));
    sandbox = new HostSandbox({ cwd: dir, env: { FROM_CONFIG: 'yes' } });
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('runs in the data directory with separate streams and the exit code', async () => {
    const result = await sandbox.run(['sh', '-c', 'pwd; echo err >&2; echo $FROM_CONFIG; exit 4']);
    expect(result).toEqual({ exitCode: 4, stdout: `${dir}\nyes\n`, stderr: 'err\n', timedOut: false });
  });

  it('feeds stdin and honours cwd and env', async () => {
    expect((await sandbox.run(['cat'], { input: 'abc' })).stdout).toBe('abc');
    expect((await sandbox.run(['pwd'], { cwd: '/' })).stdout).toBe('/\n');
    expect((await sandbox.run(['sh', '-c', 'echo $X'], { env: { X: '1' } })).stdout).toBe('1\n');
  });

  it('kills a command that times out', async () => {
    const result = await sandbox.run(['sh', '-c', 'echo started; exec sleep 600'], { timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, stdout: 'started\n', exitCode: 137 });
  });

  it('a missing program is a clear EXEC_FAILED', async () => {
    const error = await sandbox.run(['no-such-program-xyz']).catch((e: unknown) => e);
    expect(isCodedError(error, 'EXEC_FAILED')).toBe(true);
    expect((error as Error).message).toContain('no-such-program-xyz');
  });

  it('spawn gives live pipes and the exit code', async () => {
    const child = await sandbox.spawn(['sh', '-c', 'read x; echo "got $x"; exit 2']);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stdin.end('hi\n');
    expect(await child.exited).toBe(2);
    expect(out).toBe('got hi\n');
  });

  it('openSandbox picks it for backend "host"', async () => {
    const test = await createTestInstance({ config: { container: { backend: 'host' } } });
    try {
      const opened = await openSandbox(test.instance, { logger: silentLogger() });
      expect(opened.kind).toBe('host');
      expect((await opened.run(['pwd'])).stdout.trim()).toBe(test.dataDir);
    } finally {
      await test.cleanup();
    }
  });
});
