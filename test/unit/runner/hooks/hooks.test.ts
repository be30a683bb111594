import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalAgentFiles } from '../../../../src/util/agent-files.js';
import { discoverHooks, isHookName, preStopIssues, sortHookNames } from '../../../../src/runner/hooks/hooks.js';

describe('hook names and order', () => {
  it.each([
    ['10-commit', true],
    ['commit.sh', true],
    ['.hidden', false],
    ['10-commit~', false],
    ['README.md', false],
    ['notes.txt', false],
  ])('isHookName(%s) = %s', (name, expected) => {
    expect(isHookName(name)).toBe(expected);
  });

  it('sorts by byte order', () => {
    expect(sortHookNames(['b', '20-x', 'B', '10-y', '100-z', 'a'])).toEqual(['10-y', '100-z', '20-x', 'B', 'a', 'b']);
  });
});

describe('discoverHooks', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-hooks-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function file(name: string, mode: number): Promise<void> {
    await writeFile(path.join(dir, name), '#!/bin/sh\n');
    await chmod(path.join(dir, name), mode);
  }

  it('lists executable files only, sorted, skipping dotfiles, backups and directories', async () => {
    await file('20-second', 0o755);
    await file('10-first', 0o700);
    await file('15-not-executable', 0o644);
    await file('.30-hidden', 0o755);
    await file('40-backup~', 0o755);
    await file('README.md', 0o755);
    await mkdir(path.join(dir, '50-dir'));
    await symlink(path.join(dir, '10-first'), path.join(dir, '60-link'));
    expect(await discoverHooks(new LocalAgentFiles(path.dirname(dir)), path.basename(dir))).toEqual(['10-first', '20-second', '60-link']);
  });

  it('treats a missing directory as no hooks', async () => {
    expect(await discoverHooks(new LocalAgentFiles(dir), 'nope')).toEqual([]);
  });
});

describe('preStopIssues', () => {
  const base = { stderr: '', durationMs: 1 };
  it('takes each non-empty stdout line of hooks that succeeded in time (fail-open)', () => {
    expect(
      preStopIssues([
        { ...base, hook: 'a', exitCode: 0, timedOut: false, stdout: 'uncommitted: x\n\n  tests fail  \n' },
        { ...base, hook: 'b', exitCode: 1, timedOut: false, stdout: 'ignored: failed hook' },
        { ...base, hook: 'c', exitCode: 0, timedOut: true, stdout: 'ignored: timed out' },
        { ...base, hook: 'd', exitCode: 0, timedOut: false, stdout: '' },
      ]),
    ).toEqual(['uncommitted: x', 'tests fail']);
  });
});
