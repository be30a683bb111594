import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeTlsFiles, remoteFailure } from '../../../../src/sandbox/container/remote-rows.js';

const run = promisify(execFile);
const DIR = '/home/op/.docker';

describe("doctor's remote engine: what a failed connection means", () => {
  it.each([
    ['connect ECONNREFUSED 10.0.0.5:2376', /^nothing listens at 10\.0\.0\.5:2376/, /dockerd -H tcp:\/\/0\.0\.0\.0:2376 --tlsverify/],
    ['getaddrinfo ENOTFOUND engine.example', /does not resolve/, /correct the host/],
    ['tcp://10.0.0.5:2376: no answer within 10000 ms', /^no answer from 10\.0\.0\.5:2376/, /firewall lets this machine reach port 2376/],
    ['self-signed certificate in certificate chain', /not signed by \/home\/op\/\.docker\/ca\.pem/, /put the CA that signed the engine's certificate/],
    ['unable to verify the first certificate', /not signed by/, /ca\.pem/],
    ["Hostname/IP does not match certificate's altnames: IP: 10.0.0.5 is not in the cert's list: 10.0.0.6", /not for 10\.0\.0\.5:2376/, /subjectAltName/],
    ['write EPROTO 00D8:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate', /refused this machine's certificate/, /--tlscacert/],
    ['write EPROTO error:0A00010B:SSL routines::wrong version number', /does not speak TLS/, /--tlsverify/],
    ['certificate has expired', /certificate has expired/, /new certificate/],
  ])('%s', (message, detail, fix) => {
    const judged = remoteFailure(message, 'tcp://10.0.0.5:2376', DIR);
    expect(judged.detail).toMatch(detail);
    expect(judged.detail).toContain(message.split('\n')[0]);
    expect(judged.fix).toMatch(fix);
  });

  it('anything else is said as it came, with the way to check the engine', () => {
    const judged = remoteFailure('socket hang up\nmore', 'tcp://h:2376', DIR);
    expect(judged.detail).toBe('socket hang up');
    expect(judged.fix).toMatch(/check the engine at tcp:\/\/h:2376/);
  });
});

describe("doctor's remote engine: the client's TLS files", () => {
  let dir: string;
  const pem: Record<string, string> = {};

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-tls-'));
    const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test CA');
    await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'client.csr', '-subj', '/CN=the client');
    await openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', '1');
    for (const name of ['ca.pem', 'cert.pem', 'key.pem', 'ca-key.pem']) pem[name] = await readFile(path.join(dir, name), 'utf8');
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const files = () => ({ ca: pem['ca.pem'] as string, cert: pem['cert.pem'] as string, key: pem['key.pem'] as string });
  const day = 24 * 3600 * 1000;

  it('a matching certificate and key, in date, are ok and named', () => {
    const judged = judgeTlsFiles(files(), DIR, new Date());
    expect(judged).toMatchObject({ ok: true });
    expect(judged.detail).toMatch(/^\/home\/op\/\.docker: client the client until .*, CA test CA until /);
  });

  it('an expired client certificate fails with the way to a new one', () => {
    const judged = judgeTlsFiles(files(), DIR, new Date(Date.now() + 1.5 * day));
    expect(judged).toMatchObject({ ok: false, detail: expect.stringMatching(/^\/home\/op\/\.docker\/cert\.pem expired on /), fix: expect.stringMatching(/new client certificate/) });
  });

  it('an expired CA fails before the client certificate is judged', () => {
    expect(judgeTlsFiles(files(), DIR, new Date(Date.now() + 3 * day)).detail).toMatch(/ca\.pem expired on/);
  });

  it('a certificate not yet valid points at the clock', () => {
    const judged = judgeTlsFiles(files(), DIR, new Date(Date.now() - 2 * day));
    expect(judged).toMatchObject({ ok: false, detail: expect.stringMatching(/not valid before .*clock/), fix: expect.stringMatching(/date -u/) });
  });

  it("a key that is not the certificate's fails", () => {
    const judged = judgeTlsFiles({ ...files(), key: pem['ca-key.pem'] as string }, DIR, new Date());
    expect(judged).toMatchObject({ ok: false, detail: '/home/op/.docker/key.pem is not the key of /home/op/.docker/cert.pem' });
  });

  it.each([
    ['ca', /ca\.pem is not a PEM certificate/],
    ['cert', /cert\.pem is not a PEM certificate/],
    ['key', /key\.pem is not a usable private key/],
  ] as const)('a %s file that is not PEM fails in our words', (which, detail) => {
    const judged = judgeTlsFiles({ ...files(), [which]: 'hello\n' }, DIR, new Date());
    expect(judged.ok).toBe(false);
    expect(judged.detail).toMatch(detail);
  });
});
