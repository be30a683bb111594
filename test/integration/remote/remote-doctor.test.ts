import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { doctorCommand } from '../../../src/cli/commands/agent-kernel/doctor.js';
import { EXIT } from '../../../src/cli/commands/command.js';
import { remoteEngineRows } from '../../../src/sandbox/container/remote-rows.js';
import type { CheckRow } from '../../../src/sandbox/container/preflight.js';
import { type Engine, connectEngine, dataVolumeName } from '../../../src/sandbox/engine/engine.js';
import { LABEL } from '../../../src/sandbox/engine/image.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type RemoteEngine, startRemoteEngine } from '../../helpers/remote-engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

const run = promisify(execFile);

/**
 * `agent-kernel doctor` on an instance whose engine is on another machine (the second dockerd of
 * test/helpers/remote-engine.ts, over TCP with mutual TLS): the TLS files, whether the engine
 * answers and, when it does not, which of the usual causes it is with its fix; and the volume
 * there that holds the data directory. Each broken set-up is made for real: a folder of
 * certificates with a piece missing, a CA the engine did not use, a client the engine does not
 * trust, a key of another certificate, a port nobody listens on, no TLS at all.
 */
describeWithEngine('doctor on a remote engine (TCP with TLS)', () => {
  let remote: RemoteEngine;
  let engine: Engine;
  let test: TestInstance;
  let scratch: string;

  const rowsFor = async (address: string, env: NodeJS.ProcessEnv): Promise<Record<string, CheckRow>> => {
    const { rows } = await remoteEngineRows(address, { env, instance: test.instance });
    return Object.fromEntries(rows.map((row) => [row.name, row]));
  };
  /** A folder of client files: the remote's, with some replaced by `replace` (name → path). */
  const certDir = async (name: string, replace: Record<string, string>, omit: string[] = []): Promise<string> => {
    const dir = path.join(scratch, name);
    await run('mkdir', ['-p', dir]);
    for (const file of ['ca.pem', 'cert.pem', 'key.pem']) {
      if (omit.includes(file)) continue;
      await copyFile(replace[file] ?? path.join(remote.certDir, file), path.join(dir, file));
    }
    return dir;
  };

  beforeAll(async () => {
    remote = await startRemoteEngine();
    engine = await connectEngine({ socket: remote.address, env: remote.env });
    test = await createTestInstance({ config: { container: { network: 'none', engine: remote.address } } });
    scratch = await mkdtemp(path.join(os.tmpdir(), 'ak-rdoc-'));
    // Another CA, and a client certificate it signed (the engine trusts neither).
    const openssl = (...args: string[]) => run('openssl', args, { cwd: scratch });
    await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-ca-key.pem', '-out', 'other-ca.pem', '-days', '2', '-subj', '/CN=another CA');
    await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-key.pem', '-out', 'other.csr', '-subj', '/CN=a stranger');
    await openssl('x509', '-req', '-in', 'other.csr', '-CA', 'other-ca.pem', '-CAkey', 'other-ca-key.pem', '-CAcreateserial', '-out', 'other-cert.pem', '-days', '2');
  }, 300_000);

  afterAll(async () => {
    await test?.cleanup();
    await remote?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 180_000);

  it('says the TLS files, the engine and its version, and the volume (made by us or not)', async () => {
    let rows = await rowsFor(remote.address, remote.env);
    expect(rows['engine tls']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/client agent-kernel client until .*, CA agent-kernel test CA until/) });
    expect(rows.engine).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^docker \S+ \(API [\d.]+\) at tcp:\/\/.* \(remote: the data directory is a volume there\)$/) });
    expect(rows['data volume']).toMatchObject({ status: 'ok', detail: `${dataVolumeName(test.name)} not made yet: agent-kernel container up ${test.name} makes it there` });

    // A volume of that name that agent-kernel did not make is someone else's.
    await engine.docker.createVolume({ Name: dataVolumeName(test.name) });
    rows = await rowsFor(remote.address, remote.env);
    expect(rows['data volume']).toMatchObject({ status: 'failed', detail: expect.stringMatching(/was not made by agent-kernel/), fix: expect.stringMatching(/docker volume rm agent-kernel-t-\w+-data/) });
    await engine.docker.getVolume(dataVolumeName(test.name)).remove();
    await engine.docker.createVolume({ Name: dataVolumeName(test.name), Labels: { [LABEL.instance]: test.name, [LABEL.dataDir]: test.dataDir } });
    rows = await rowsFor(remote.address, remote.env);
    expect(rows['data volume']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/on tcp:.*, made .*: the agent's data directory$/) });
    await engine.docker.getVolume(dataVolumeName(test.name)).remove();
  }, 120_000);

  it.each([
    ['a CA that did not sign the engine', { 'ca.pem': 'other-ca.pem' }, /not signed by .*ca\.pem/, /put the CA that signed the engine's certificate/],
    ['a client the engine does not trust', { 'cert.pem': 'other-cert.pem', 'key.pem': 'other-key.pem' }, /refused this machine's certificate/, /with the CA the engine trusts \(its --tlscacert\)/],
  ])('names the cause when the engine turns the connection down: %s', async (_, swap, detail, fix) => {
    const dir = await certDir(_.replace(/\W/g, '-'), Object.fromEntries(Object.entries(swap).map(([k, v]) => [k, path.join(scratch, v)])));
    const rows = await rowsFor(remote.address, { ...remote.env, DOCKER_CERT_PATH: dir });
    expect(rows['engine tls']?.status).toBe('ok');
    expect(rows.engine).toMatchObject({ status: 'not-ready', detail: expect.stringMatching(detail), fix: expect.stringMatching(fix) });
    expect(rows['data volume']).toBeUndefined();
  }, 60_000);

  it('refuses files that cannot work before it tries: a key of another certificate', async () => {
    const dir = await certDir('mixed', { 'key.pem': path.join(scratch, 'other-key.pem') });
    const rows = await rowsFor(remote.address, { ...remote.env, DOCKER_CERT_PATH: dir });
    expect(rows['engine tls']).toMatchObject({ status: 'failed', detail: `${dir}/key.pem is not the key of ${dir}/cert.pem` });
  }, 60_000);

  it('says which port nobody listens on, and that an engine without TLS is open to anyone who reaches it', async () => {
    const closed = remote.address.replace(/:2376$/, ':2377');
    let rows = await rowsFor(closed, remote.env);
    expect(rows.engine).toMatchObject({ status: 'not-ready', detail: expect.stringMatching(/nothing listens at .*:2377/), fix: expect.stringMatching(/-H tcp:\/\/0\.0\.0\.0:2377 --tlsverify/) });
    const plain = remote.address.replace(/:2376$/, ':2375');
    const env = { ...remote.env };
    delete env.DOCKER_TLS_VERIFY;
    rows = await rowsFor(plain, env);
    expect(rows['engine tls']).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^none: whoever reaches .*:2375 controls that engine/) });
  }, 60_000);

  it('agent-kernel doctor prints the rows with their fix lines and exits 3 when the TLS files are missing', async () => {
    const dir = await certDir('empty', {}, ['ca.pem', 'cert.pem', 'key.pem']);
    const saved = { path: process.env.DOCKER_CERT_PATH, verify: process.env.DOCKER_TLS_VERIFY };
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.env.DOCKER_CERT_PATH = dir;
    process.env.DOCKER_TLS_VERIFY = '1';
    process.stdout.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stdout.write;
    let code: number;
    try {
      code = await doctorCommand.run([test.dataDir]);
    } finally {
      process.stdout.write = write;
      process.env.DOCKER_CERT_PATH = saved.path;
      if (saved.verify === undefined) delete process.env.DOCKER_TLS_VERIFY;
      else process.env.DOCKER_TLS_VERIFY = saved.verify;
      if (saved.path === undefined) delete process.env.DOCKER_CERT_PATH;
    }
    const output = written.join('');
    expect(code).toBe(EXIT.NOT_READY);
    expect(output).toMatch(new RegExp(`MISSING\\s+engine tls\\s+${dir} lacks ca\\.pem .*cert\\.pem .*key\\.pem`));
    expect(output).toMatch(/fix: put the CA \(ca\.pem\) and this machine's client certificate and key/);
    expect(output).toMatch(/skip\s+engine\s+tcp:\/\/.*: no TLS files to reach it with/);
  }, 120_000);
});
