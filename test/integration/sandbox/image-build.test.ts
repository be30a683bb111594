import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { bootstrapBaseImage } from '../../../src/sandbox/engine/bootstrap.js';
import { type Engine, connectEngine } from '../../../src/sandbox/engine/engine.js';
import { imageExists } from '../../../src/sandbox/engine/image.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { preflight, runInImage } from '../../../src/sandbox/container/preflight.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

const logger = silentLogger();

describeWithEngine('image builds (real engine)', () => {
  let engine: Engine;
  const made: TestInstance[] = [];
  const tags: string[] = [];

  beforeAll(async () => {
    engine = await connectEngine();
  });
  afterAll(async () => {
    for (const t of made) await t.cleanup();
    for (const tag of tags) {
      const id = await engine.docker.getImage(tag).inspect().then((i) => i.Id, () => undefined);
      if (id) await engine.docker.getImage(id).remove({ force: true });
    }
  });

  async function instance(containerfile: string | false, config?: Record<string, unknown>): Promise<TestInstance> {
    const t = await createTestInstance({ containerfile, ...(config ? { config } : {}) });
    made.push(t);
    return t;
  }

  it('a failing step gives IMAGE_BUILD_FAILED with the step and its output', async () => {
    const t = await instance('FROM debian:bookworm-slim\nRUN echo preparing\nRUN echo boom-on-stdout; echo boom-on-stderr >&2; exit 3\n');
    const error = await ensureImage(engine, t.instance, { logger }).catch((e: unknown) => e);
    expect(isCodedError(error, 'IMAGE_BUILD_FAILED')).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(/failed at step 3\/\d+ ?: RUN echo boom-on-stdout/i);
    expect(message).toContain('boom-on-stdout');
    expect(message).toContain('boom-on-stderr');
    expect(message).toMatch(/(returned a non-zero code|exit status):? 3/); // Docker's wording, Podman's
  });

  it('a step that never ends is stopped at container.build_timeout, with a message saying so, and leaves nothing running', async () => {
    const marker = `ak-never-${randomBytes(3).toString('hex')}`;
    const t = await createTestInstance({ containerfile: `FROM debian:bookworm-slim\nRUN echo ${marker}; exec sleep 3600\n`, config: { container: { build_timeout: '3s' } } });
    made.push(t);
    const started = Date.now();
    const error = await ensureImage(engine, t.instance, { logger }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(isCodedError(error, 'IMAGE_BUILD_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/took longer than 3 s and was stopped.*container\.build_timeout/);
    expect((error as Error).message).toContain(`RUN echo ${marker}`);
    // The engine cancels the build when the connection closes: its step's container goes.
    const running = async () => (await engine.docker.listContainers({ all: true })).filter((c) => c.Command.includes(marker)).length;
    await expect.poll(running, { timeout: 20_000, interval: 250 }).toBe(0);
  });

  it('a FROM image that is missing and cannot be pulled gives BASE_IMAGE_MISSING with the bootstrap command', async () => {
    const base = `agent-kernel-test/missing-${randomBytes(3).toString('hex')}:1`;
    // The operator allows it (container.base_images), but no engine here has it: it is never pulled.
    const t = await instance(`FROM ${base}\nRUN true\n`, { container: { base_images: [base] } });
    const error = await ensureImage(engine, t.instance, { logger }).catch((e: unknown) => e);
    expect(isCodedError(error, 'BASE_IMAGE_MISSING')).toBe(true);
    expect((error as Error).message).toContain(`agent-kernel image bootstrap ${base}`);
  });

  it('streams build progress and reuses the image while the context is unchanged', async () => {
    const t = await instance(undefined as unknown as string);
    const lines: string[] = [];
    const first = await ensureImage(engine, t.instance, { logger, onProgress: (l) => lines.push(l) });
    expect(lines.some((l) => /^step 1\/\d+ ?: FROM debian:bookworm-slim/i.test(l))).toBe(true);
    const again: string[] = [];
    expect(await ensureImage(engine, t.instance, { logger, onProgress: (l) => again.push(l) })).toEqual(first);
    expect(again).toEqual([]);
  });

  it('the built-in default image has what terminals and agents need', async () => {
    const t = await instance(false);
    const { tag } = await ensureImage(engine, t.instance, { logger });
    const { exitCode, output } = await runInImage(engine, tag, t.name, [
      'sh',
      '-c',
      'tmux -V && bash --version | head -1 && git --version && curl --version | head -1 && python3 --version && command -v vi less ps && test -f /etc/ssl/certs/ca-certificates.crt && echo certs-ok',
    ]);
    expect(exitCode, output).toBe(0);
    expect(output).toMatch(/tmux 3\.[2-9]/);
    expect(output).toMatch(/git version/);
    expect(output).toMatch(/certs-ok/);
  }, 300_000);

  it('doctor flags an image without tmux, with a fix', async () => {
    const t = await instance('FROM debian:bookworm-slim\n');
    const rows = await preflight(t.instance, { logger, harnessCommand: 'true' });
    expect(rows.find((r) => r.name === 'image')?.status).toBe('ok');
    const tmux = rows.find((r) => r.name === 'tmux');
    expect(tmux).toMatchObject({ status: 'failed' });
    expect(tmux?.detail).toMatch(/no tmux in the image/);
    expect(tmux?.fix).toMatch(/install tmux >= 3\.2/);
    expect(rows.find((r) => r.name === 'data dir')?.status).toBe('ok');
  });

  it('doctor passes every row for the test image', async () => {
    const t = await instance(undefined as unknown as string);
    const rows = await preflight(t.instance, { logger, harnessCommand: 'true' });
    expect(rows.map((r) => [r.name, r.status])).toEqual([
      ['engine', 'ok'],
      // On Podman, doctor adds its row (version, rootless or not, runtime, cgroups).
      ...(engine.name === 'podman' ? [['podman', 'ok']] : []),
      ['boundary', 'ok'],
      ['configuration', 'ok'],
      ['base image', 'ok'],
      ['image', 'ok'],
      ['tmux', 'ok'],
      ['network', 'ok'],
      ['data dir', 'ok'],
      ['claude code', 'ok'],
    ]);
  });

  it('bootstrap skips a tag that exists, and builds a new one offline from Debian packages', async () => {
    expect(await bootstrapBaseImage(engine, { logger, tag: 'debian:bookworm-slim' })).toEqual({ tag: 'debian:bookworm-slim', skipped: true });
    const tag = `agent-kernel-test/bootstrap-${randomBytes(3).toString('hex')}:bookworm`;
    tags.push(tag);
    const lines: string[] = [];
    expect(await bootstrapBaseImage(engine, { logger, tag, onProgress: (l) => lines.push(l) })).toEqual({ tag, skipped: false });
    expect(await imageExists(engine, tag)).toBe(true);
    const { exitCode, output } = await runInImage(engine, tag, 'agent-kernel-test', ['sh', '-c', 'cat /etc/debian_version; command -v apt-get; echo $PATH']);
    expect(exitCode, output).toBe(0);
    expect(output).toMatch(/^12\./);
    expect(output).toContain('/usr/bin/apt-get');
  }, 300_000);
});
