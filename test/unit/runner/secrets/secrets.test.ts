import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { harnessEnvironment, loadSecrets, secretsDir } from '../../../../src/runner/secrets/secrets.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadSecrets', () => {
  it('reads one variable a file, trims trailing newlines, skips dotfiles and directories', async () => {
    await writeFile(path.join(dir, 'API_KEY'), 'sk-123456\n');
    await writeFile(path.join(dir, 'MULTI'), 'line1\nline2\n\n');
    await writeFile(path.join(dir, 'CRLF'), 'value1\r\n');
    await writeFile(path.join(dir, 'SPACES'), '  keep spaces  ');
    await writeFile(path.join(dir, '.hidden'), 'nope');
    await mkdir(path.join(dir, 'SUBDIR'));
    await writeFile(path.join(dir, 'SUBDIR', 'INNER'), 'nope');
    const { values, skipped } = await loadSecrets(dir);
    expect(values).toEqual({ API_KEY: 'sk-123456', MULTI: 'line1\nline2', CRLF: 'value1', SPACES: '  keep spaces  ' });
    expect(skipped).toEqual([]);
  });

  it('refuses a value too short to redact from logs, naming the file and never the value', async () => {
    await writeFile(path.join(dir, 'PIN'), 'q7#Zk\n');
    await writeFile(path.join(dir, 'EMPTY'), '');
    const { values, skipped } = await loadSecrets(dir);
    expect(values).toEqual({ EMPTY: '' });
    expect(skipped).toEqual([{ file: 'PIN', reason: expect.stringMatching(/shorter than 6 characters.*use a longer value/) as string }]);
    expect(JSON.stringify(skipped)).not.toContain('q7#Zk');
  });

  it('gives none for a missing directory', async () => {
    expect(await loadSecrets(path.join(dir, 'absent'))).toEqual({ values: {}, skipped: [] });
  });

  it('skips names that cannot be environment variables, saying so without the value', async () => {
    await writeFile(path.join(dir, 'my-key'), 'topsecretvalue');
    const { values, skipped } = await loadSecrets(dir);
    expect(values).toEqual({});
    expect(skipped).toEqual([{ file: 'my-key', reason: expect.stringMatching(/not a valid environment variable name/) as string }]);
    expect(JSON.stringify(skipped)).not.toContain('topsecretvalue');
  });

  it('follows a symlink to a file, and skips one to a directory', async () => {
    await mkdir(path.join(dir, 'elsewhere'));
    await writeFile(path.join(dir, 'elsewhere', 'real'), 'linked-value\n');
    const secrets = path.join(dir, 'secrets');
    await mkdir(secrets);
    await symlink(path.join(dir, 'elsewhere', 'real'), path.join(secrets, 'LINKED'));
    await symlink(path.join(dir, 'elsewhere'), path.join(secrets, 'DIRLINK'));
    expect((await loadSecrets(secrets)).values).toEqual({ LINKED: 'linked-value' });
  });
});

describe('secretsDir', () => {
  it('defaults to <config>/secrets/<name>, and resolves a configured one against the data dir', () => {
    expect(secretsDir('alpha', '/data/alpha', undefined, { AGENT_KERNEL_CONFIG_DIR: '/cfg' })).toBe('/cfg/secrets/alpha');
    expect(secretsDir('alpha', '/data/alpha', undefined, { XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/agent-kernel/secrets/alpha');
    expect(secretsDir('alpha', '/data/alpha', 'keys', { AGENT_KERNEL_CONFIG_DIR: '/cfg' })).toBe('/cfg/keys');
    expect(secretsDir('alpha', '/data/alpha', '/run/keys', {})).toBe('/run/keys');
    // The agent could write variables there (NODE_OPTIONS=--require ...), so never inside the data directory.
    expect(() => secretsDir('alpha', '/data/alpha', '/data/alpha/secrets', {})).toThrow(/inside the data directory, which the agent can write/);
    expect(() => secretsDir('alpha', '/data/alpha', '../../data/alpha', { AGENT_KERNEL_CONFIG_DIR: '/cfg/x' })).toThrow(/inside the data directory/);
  });
});

describe('harnessEnvironment', () => {
  it('layers the base, then the secrets, then runner.env (which wins)', () => {
    expect(harnessEnvironment({ PATH: '/bin', A: 'base', U: undefined }, { A: 'secret', B: 'secret' }, { B: 'config' })).toEqual({
      PATH: '/bin',
      A: 'secret',
      B: 'config',
    });
  });
});
