import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBearer, checkHost, checkOrigin, resolveToken } from '../../../src/server/http-auth.js';

describe('checkOrigin', () => {
  it.each([undefined, '', 'http://localhost:3000', 'http://127.0.0.1', 'https://[::1]:8443', 'http://app.localhost'])('allows %s', (origin) => {
    expect(checkOrigin(origin)).toBeUndefined();
  });
  it.each(['http://evil.example', 'null', 'http://127.0.0.1.evil.example', 'file://', 'http://10.0.0.1'])('refuses %s with 403', (origin) => {
    expect(checkOrigin(origin)).toMatchObject({ status: 403, error: 'forbidden_origin' });
  });
});

describe('checkHost', () => {
  it('refuses a foreign Host only when listening on loopback', () => {
    expect(checkHost('127.0.0.1:8765', true)).toBeUndefined();
    expect(checkHost('localhost', true)).toBeUndefined();
    expect(checkHost('evil.example:8765', true)).toMatchObject({ status: 403 });
    expect(checkHost('evil.example:8765', false)).toBeUndefined();
  });
});

describe('checkBearer', () => {
  const token = 'a'.repeat(32);
  it('accepts the right token, refuses a missing or wrong one with 401 and a hint', () => {
    expect(checkBearer(`Bearer ${token}`, token, 'hint')).toBeUndefined();
    expect(checkBearer(undefined, token, 'The token is in /t.')).toMatchObject({ status: 401, error: 'missing_token', message: expect.stringContaining('/t') });
    expect(checkBearer('Basic abc', token, 'h')).toMatchObject({ status: 401, error: 'missing_token' });
    expect(checkBearer(`Bearer ${'b'.repeat(32)}`, token, 'h')).toMatchObject({ status: 401, error: 'wrong_token' });
    expect(checkBearer('Bearer short', token, 'h')).toMatchObject({ status: 401, error: 'wrong_token' });
  });
});

describe('resolveToken', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-token-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates a token once with mode 0600, then reuses it', async () => {
    const defaultFile = path.join(dir, 'kernel', 'http-token');
    const first = await resolveToken({ env: {}, defaultFile });
    expect(first.generated).toBe(true);
    expect(first.token.length).toBeGreaterThanOrEqual(32);
    expect((await stat(defaultFile)).mode & 0o777).toBe(0o600);
    const second = await resolveToken({ env: {}, defaultFile });
    expect(second).toEqual({ token: first.token, source: defaultFile, generated: false });
  });

  it('prefers the environment, then --token-file, and refuses weak tokens', async () => {
    const defaultFile = path.join(dir, 'http-token');
    const env = { AGENT_KERNEL_TOKEN: 'e'.repeat(20) };
    expect(await resolveToken({ env, defaultFile })).toMatchObject({ token: 'e'.repeat(20), generated: false });
    const file = path.join(dir, 'given');
    await writeFile(file, `${'f'.repeat(24)}\n`);
    expect(await resolveToken({ env: {}, tokenFile: file, defaultFile })).toMatchObject({ token: 'f'.repeat(24), source: file });
    await expect(resolveToken({ env: { AGENT_KERNEL_TOKEN: 'short' }, defaultFile })).rejects.toThrow(/too short/);
    await expect(resolveToken({ env: {}, tokenFile: path.join(dir, 'missing'), defaultFile })).rejects.toThrow(/Cannot read the token file/);
    await expect(readFile(defaultFile)).rejects.toThrow();
  });
});
