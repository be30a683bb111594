import { mkdtemp, mkdir, rm, writeFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILD_STEP, baseImages, buildContext, contextHash, imageRepository, imageTag, shortReference } from '../../../../src/sandbox/engine/image.js';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import { unitPaths } from '../../../helpers/test-instance.js';

describe('baseImages', () => {
  it.each([
    ['FROM debian:bookworm-slim\nRUN true', ['debian:bookworm-slim']],
    ['from --platform=linux/amd64 debian:bookworm-slim AS base\nFROM base\nRUN x', ['debian:bookworm-slim']],
    ['FROM scratch\nCOPY x /', []],
    ['ARG V=1\nFROM alpine:$V', []],
    ['FROM a:1 AS build\nFROM b:2\nCOPY --from=build / /', ['a:1', 'b:2']],
    ['# FROM commented:out\nFROM \\\n  debian:bookworm', ['debian:bookworm']],
  ])('%j', (text, expected) => {
    expect(baseImages(text)).toEqual(expected);
  });
});

describe('image names', () => {
  it('is agent-kernel/<lower-case name>:<12 hex of the hash>', () => {
    expect(imageTag('Scout_1', 'abcdef0123456789ff')).toBe('agent-kernel/scout_1:abcdef012345');
    expect(imageRepository('.x')).toBe('agent-kernel/x');
  });
});

describe('engine output', () => {
  it.each([
    ['Step 3/7 : RUN apt-get update', true],
    ['STEP 3/7: RUN apt-get update', true],
    [' ---> Running in abc', false],
  ])('%j is a build step: %s', (line, expected) => expect(BUILD_STEP.test(line)).toBe(expected));

  it.each([
    ['docker.io/library/debian:bookworm-slim', 'debian:bookworm-slim'],
    ['docker.io/agent-kernel/x:1', 'agent-kernel/x:1'],
    ['localhost/a:b', 'a:b'],
    ['agent-kernel/x:1', 'agent-kernel/x:1'],
  ])('shortReference(%s) = %s', (reference, expected) => expect(shortReference(reference)).toBe(expected));
});

describe('contextHash and buildContext', () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function instanceIn(files: Record<string, string>) {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-hash-'));
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    }
    return { name: 'h', dataDir: dir, paths: unitPaths('h', dir), config: parseAgentConfig({}) };
  }

  it('uses the built-in Containerfile when the repo has none', async () => {
    const context = await buildContext(await instanceIn({}));
    expect(context.builtIn).toBe(true);
    expect(context.files).toEqual(['Containerfile.default']);
  });

  it('changes when any file of the context changes, or becomes executable', async () => {
    const instance = await instanceIn({ 'system/container/Containerfile': 'FROM x\n', 'system/container/etc/motd': 'hi' });
    const context = await buildContext(instance);
    expect(context).toMatchObject({ builtIn: false, files: ['Containerfile', 'etc/motd'], containerfile: 'Containerfile' });
    const first = await contextHash(context);
    expect(await contextHash(context)).toBe(first);
    await writeFile(path.join(dir, 'system/container/etc/motd'), 'hello');
    const second = await contextHash(context);
    expect(second).not.toBe(first);
    await chmod(path.join(dir, 'system/container/etc/motd'), 0o755);
    expect(await contextHash(context)).not.toBe(second);
  });

  it('does not depend on files outside system/container', async () => {
    const instance = await instanceIn({ 'system/container/Containerfile': 'FROM x\n' });
    const before = await contextHash(await buildContext(instance));
    await writeFile(path.join(dir, 'notes.md'), 'the agent writes here all the time');
    expect(await contextHash(await buildContext(instance))).toBe(before);
  });
});
