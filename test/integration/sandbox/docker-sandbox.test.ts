import type { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox, SandboxProcess } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { pollUntil } from '../../helpers/poll.js';

function readUntil(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      if (pattern.test(text)) {
        stream.off('data', onData);
        resolve(text);
      }
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error(`stream ended before ${String(pattern)}; got ${JSON.stringify(text)}`)));
  });
}

describeWithEngine('DockerSandbox (real engine)', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance();
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('is a docker sandbox named after the container', () => {
    expect(sandbox.kind).toBe('docker');
    expect(sandbox.description).toContain(`agent-kernel-${test.name}`);
  });

  it('runs a command and keeps stdout and stderr apart, with its exit code', async () => {
    const result = await sandbox.run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false });
  });

  it('starts in the data directory, which is the same path inside', async () => {
    const result = await sandbox.run(['pwd']);
    expect(result.stdout.trim()).toBe(test.dataDir);
    const seen = await sandbox.run(['cat', 'system/agent_config.json']);
    expect(seen.exitCode).toBe(0);
  });

  it('passes stdin, env, cwd and user', async () => {
    expect((await sandbox.run(['cat'], { input: 'hello\nworld' })).stdout).toBe('hello\nworld');
    expect((await sandbox.run(['sh', '-c', 'echo $FOO'], { env: { FOO: 'bar baz' } })).stdout).toBe('bar baz\n');
    expect((await sandbox.run(['pwd'], { cwd: '/tmp' })).stdout).toBe('/tmp\n');
    expect((await sandbox.run(['id', '-u'], { user: 'nobody' })).stdout.trim()).not.toBe('0');
  });

  it('reports a missing program as a non-zero exit, not a throw', async () => {
    const result = await sandbox.run(['no-such-program-here']);
    expect(result.exitCode).not.toBe(0);
    expect(result.timedOut).toBe(false);
  });

  it('times out a command that runs too long, and kills it', async () => {
    const result = await sandbox.run(['sh', '-c', 'echo started; exec sleep 600'], { timeoutMs: 1500 });
    expect(result.timedOut).toBe(true);
    expect(result.stdout).toBe('started\n');
    const ps = await sandbox.run(['ps', '-eo', 'args']);
    expect(ps.stdout).not.toContain('sleep 600');
  });

  it('spawns a long-lived process with live pipes; exited resolves after stdin closes', async () => {
    const child: SandboxProcess = await sandbox.spawn(['sh', '-c', 'while read line; do echo "got $line"; echo "e:$line" >&2; done; exit 7']);
    const out = readUntil(child.stdout, /got one\n/);
    const err = readUntil(child.stderr, /e:one\n/);
    child.stdin.write('one\n');
    expect(await out).toBe('got one\n');
    expect(await err).toBe('e:one\n');
    child.stdin.end();
    expect(await child.exited).toBe(7);
  });

  it('close() drops the connection and exited still resolves', async () => {
    const child = await sandbox.spawn(['sleep', '300']);
    child.close();
    const code = await child.exited;
    expect(typeof code).toBe('number');
  });

  it('close() just as a paused connection goes on ends stdout without an error', async () => {
    // Unread, the connection pauses with output still in it; reading lets it go on, and close() comes first.
    const child = await sandbox.spawn(['seq', '1', '100000000']);
    // Its stdout full (a write there said wait for drain): the connection is paused.
    await pollUntil(() => (child.stdout as unknown as Writable).writableNeedDrain, 'the unread connection to pause', { timeoutMs: 10_000 });
    const errors: Error[] = [];
    const onUncaught = (error: Error) => errors.push(error);
    process.on('uncaughtException', onUncaught);
    child.stdout.on('error', onUncaught);
    try {
      child.stdout.once('drain', () => child.close());
      child.stdout.resume();
      await new Promise<void>((resolve) => child.stdout.once('close', resolve));
      // Output the connection still held would have been handed over by the time the engine says the exec ended.
      await child.exited;
      expect(errors.map((e) => e.message)).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
