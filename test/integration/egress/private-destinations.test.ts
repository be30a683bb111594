import { type ChildProcess, execFile, spawn } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { proxyContainerName } from '../../../src/sandbox/egress/proxy.js';
import { connectEngine, type Engine } from '../../../src/sandbox/engine/engine.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { bridgeGateway, type LocalServer, startLocalServer } from '../../helpers/local-server.js';
import { TEST_IMAGE, type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { BIN, ensureBuilt } from '../server/helpers.js';

const execFileAsync = promisify(execFile);

/**
 * Allowed names that lead somewhere other than the public internet. Every address is made local:
 * the IPv4 and IPv6 representatives of each range are put on the loopback of the proxy's own network
 * namespace (from the host, with nsenter), where a canary listens on every port the trials use; the
 * host's bridge address and its other addresses have canaries on the host. So a request that gets
 * through lands on a canary and never leaves this machine. The names reach squid through its own
 * resolution (its hosts file), as a DNS answer the agent controls would.
 */
const IN_PROXY: Record<string, string> = {
  private10: '10.11.12.13',
  private172: '172.16.5.5',
  private192: '192.168.7.7',
  cgnat: '100.64.1.1',
  alibaba: '100.100.100.200',
  loopback: '127.0.0.2',
  metadata: '169.254.169.254',
  azure: '168.63.129.16',
  oracle: '192.0.0.192',
  zero: '0.0.0.0',
  multicast: '224.0.0.1',
  v6loopback: '::1',
  ula: 'fd12:3456::1',
  awsv6: 'fd00:ec2::254',
  mapped: '::ffff:10.11.12.13',
  nat64: '64:ff9b::a0b:c0d',
  v6multicast: 'ff02::1',
};
const ON_LOOPBACK = ['10.11.12.13', '172.16.5.5', '192.168.7.7', '100.64.1.1', '100.100.100.200', '169.254.169.254', '168.63.129.16', '192.0.0.192'];
const ON_LOOPBACK6 = ['fd12:3456::1', 'fd00:ec2::254', '64:ff9b::a0b:c0d'];

/** A TCP canary in the proxy's network namespace: prints every connection it accepts, answers like an HTTP server. */
const CANARY = `
const net = require('net');
for (const port of process.argv.slice(1).map(Number)) {
  const serve = (host) => net.createServer((s) => { console.log('connection ' + String(s.localAddress).replace(/^::ffff:/, '') + ' ' + port); s.on('error', () => {}); s.end('HTTP/1.1 200 OK\\r\\nContent-Length: 6\\r\\n\\r\\ncanary'); })
    .on('error', (e) => console.log('listen-error ' + host + ' ' + port + ' ' + e.code)).listen({ port, host, ipv6Only: false });
  serve('::');
}
setTimeout(() => console.log('ready'), 200);
`;

/** Inside the agent's container: fetch each URL through the proxy; prints one outcome per URL. */
const TRIALS = `
import json, sys, urllib.request, urllib.error
out = []
for url in json.loads(sys.argv[1]):
    try:
        out.append("reached " + urllib.request.urlopen(url, timeout=5).read().decode()[:20])
    except urllib.error.HTTPError as e: out.append(str(e.code))
    except Exception as e: out.append("403" if "403" in str(e) else "error " + str(e)[:80])
print(json.dumps(out))
`;
import { pollUntil } from '../../helpers/poll.js';

describeWithEngine('the proxy reaches only the public internet (allowed names mapped onto local canaries)', () => {
  let engine: Engine;
  let test: TestInstance;
  let sandbox: Sandbox;
  let proxy: DockerSandbox;
  let proxyPid: number;
  let canary: ChildProcess;
  const canaryLines: string[] = [];
  const hostCanaries: LocalServer[] = [];
  let explicit: LocalServer;
  let gateway: string;
  const PORT = 18_000 + Math.floor(Math.random() * 2000);
  const inNetns = (...argv: string[]) => execFileAsync('nsenter', ['-t', String(proxyPid), '-n', ...argv]);

  beforeAll(async () => {
    engine = await connectEngine();
    gateway = await bridgeGateway();
    explicit = await startLocalServer(gateway, 'explicitly allowed');
    // The host's bridge address and its other addresses: canaries on the host itself.
    const hostAddresses = Object.values(os.networkInterfaces())
      .flat()
      .filter((a) => a && a.family === 'IPv4' && !a.internal && a.address !== gateway)
      .map((a) => a!.address);
    for (const address of [gateway, ...hostAddresses]) hostCanaries.push(await startLocalServer(address, 'host canary'));
    const entries = ['*.canary.test:*', 'plain.test', `${gateway}:${explicit.port}`];
    // FROM the run's test image: this allow list maps deb.debian.org onto a canary, so a build that missed
    // the cache could not run apt-get (it failed so once in CI).
    test = await createTestInstance({ config: { container: { allow: entries } }, containerfile: `FROM ${TEST_IMAGE}\n` });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });

    const info = await engine.docker.getContainer(proxyContainerName(test.name)).inspect();
    proxyPid = info.State.Pid;
    proxy = new DockerSandbox({ engine, containerName: proxyContainerName(test.name), cwd: '/', user: 'root' });
    const proxyOwn = Object.values(info.NetworkSettings.Networks ?? {})[0]?.IPAddress;
    // IPv6 on in the proxy's namespace (Docker turns it off without an IPv6 network), so IPv6 answers could be followed too.
    await inNetns('sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=0', 'net.ipv6.conf.lo.disable_ipv6=0').catch(() => undefined);
    for (const address of ON_LOOPBACK) await inNetns('ip', 'addr', 'add', `${address}/32`, 'dev', 'lo');
    for (const address of ON_LOOPBACK6) await inNetns('ip', '-6', 'addr', 'add', `${address}/128`, 'dev', 'lo');
    canary = spawn('nsenter', ['-t', String(proxyPid), '-n', process.execPath, '-e', CANARY, String(PORT), '80', '443'], { stdio: ['ignore', 'pipe', 'inherit'] });
    canary.stdout!.on('data', (chunk: Buffer) => canaryLines.push(...chunk.toString().split('\n').filter(Boolean)));
    await pollUntil(() => canaryLines.includes('ready'), 'the canary listens', { timeoutMs: 10_000 });
    expect(canaryLines.filter((l) => l.startsWith('listen-error'))).toEqual([]);

    // The names, in the proxy's hosts file; then squid reads it again.
    const hosts = [
      ...Object.entries(IN_PROXY).map(([name, address]) => `${address} ${name}.canary.test ${name}.plain.test`),
      `${gateway} bridge.canary.test`,
      `::ffff:${gateway} mappedbridge.canary.test`,
      ...(proxyOwn ? [`${proxyOwn} itself.canary.test`] : []),
      ...hostAddresses.map((address, i) => `${address} host${i}.canary.test`),
      `${IN_PROXY.private10} plain.test`,
    ];
    expect((await proxy.run(['sh', '-c', 'cat >> /etc/hosts'], { input: `${hosts.join('\n')}\n` })).exitCode).toBe(0);
    const started = async () => (await proxy.run(['grep', '-c', 'Accepting HTTP Socket connections', '/var/log/squid/cache.log'])).stdout.trim();
    const before = await started();
    await proxy.run(['squid', '-k', 'reconfigure', '-f', '/etc/squid/agent-kernel.conf']);
    await pollUntil(async () => (await started()) !== before, 'squid reads its hosts file again', { timeoutMs: 15_000 });

    // The control: the canaries do answer at those addresses, from where squid connects.
    const reached = await proxy.run(['sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | socat -t2 - TCP:${IN_PROXY.private10}:${PORT}`]);
    expect(reached.stdout).toContain('canary');
    await pollUntil(() => canaryLines.some((l) => l.startsWith(`connection ${IN_PROXY.private10} `)), 'the canary saw the control', { timeoutMs: 5000 });
    canaryLines.length = 0;
  });

  afterAll(async () => {
    canary?.kill();
    await test?.cleanup();
    for (const server of hostCanaries) await server.close();
    await explicit?.close();
  });

  it('refuses every allowed name that resolves off the internet: each range, IPv4 and IPv6, the bridge, the host, in any case, with a trailing dot, with or without a port', async () => {
    const names = [...Object.keys(IN_PROXY), 'bridge', 'mappedbridge', 'itself', ...hostCanaries.slice(1).map((_, i) => `host${i}`)];
    const urls: string[] = [];
    for (const name of names) {
      const host = `${name}.canary.test`;
      urls.push(`http://${host}:${PORT}/leak`, `https://${host}:${PORT}/leak`, `http://${host.toUpperCase()}:${PORT}/leak`, `http://${host}.:${PORT}/leak`, `http://${name}.CANARY.test.:${PORT}/leak`);
    }
    // Without a port (80 and 443, plain.test's default ports).
    urls.push('http://plain.test/leak', 'https://plain.test/leak', 'http://PLAIN.TEST./leak', 'https://Plain.Test./leak');
    const result = await sandbox.run(['python3', '-c', TRIALS, JSON.stringify(urls)], { timeoutMs: 240_000 });
    const outcomes = JSON.parse(result.stdout) as string[];
    expect(urls.map((url, i) => `${url} ${outcomes[i]}`)).toEqual(urls.map((url) => `${url} 403`));
    expect(canaryLines.filter((l) => l.startsWith('connection'))).toEqual([]);
    for (const server of hostCanaries) expect(server.requests).toEqual([]);
  });

  it('reaches a private destination the operator allowed explicitly (an IP entry)', async () => {
    const result = await sandbox.run(['python3', '-c', TRIALS, JSON.stringify([`http://${gateway}:${explicit.port}/ok`])]);
    expect(JSON.parse(result.stdout)).toEqual(['reached explicitly allowed']);
    expect(explicit.requests).toContain('GET /ok');
  });

  // ensureBuilt may build first (a minute at load 30), then the engine reads the proxy's whole log.
  it('logs each of those refusals for the operator', { timeout: 240_000 }, async () => {
    await ensureBuilt();
    const { stdout } = await execFileAsync(process.execPath, [BIN, 'egress', 'log', test.dataDir, '--lines', '2000']);
    expect(stdout).toMatch(new RegExp(`refused +GET +metadata\\.canary\\.test:${PORT} `));
    expect(stdout).toMatch(new RegExp(`refused +CONNECT +awsv6\\.canary\\.test:${PORT} `));
  });
});
