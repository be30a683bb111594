/**
 * Egress: the same downloads and requests from inside an `allowlist` container (through the
 * proxy: link → socket → squid) and an `open` one (the engine's bridge, direct), in one run.
 * The server is this machine's address on the engine's bridge: no traffic leaves the host.
 */
import { createServer } from 'node:http';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { ROOT } from '../lib/paths.mjs';
import { summary } from '../lib/stats.mjs';
import { createInstance, engine } from '../lib/instance.mjs';

const [{ openSandbox }, { silentLogger }] = await Promise.all([import(path.join(ROOT, 'dist', 'sandbox', 'container', 'open-sandbox.js')), import(path.join(ROOT, 'dist', 'log', 'logger.js'))]);

const BIG = 64 * 1024 * 1024;

/** Runs inside the container: N downloads of /big (MB/s each), then M small requests on new connections (ms each). */
const CLIENT = `
import json, sys, time, urllib.request
base, downloads, requests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rates, latencies = [], []
for _ in range(downloads):
    t = time.perf_counter(); n = 0
    with urllib.request.urlopen(base + "/big", timeout=120) as r:
        while True:
            chunk = r.read(1 << 20)
            if not chunk: break
            n += len(chunk)
    rates.append(n / (time.perf_counter() - t) / 1e6)
for _ in range(requests):
    t = time.perf_counter()
    urllib.request.urlopen(base + "/small", timeout=30).read()
    latencies.append((time.perf_counter() - t) * 1000)
print(json.dumps({"rates": rates, "latencies": latencies}))
`;

async function bridgeGateway() {
  const info = await (await engine()).docker.getNetwork('bridge').inspect();
  const local = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address)));
  const candidates = (info.IPAM?.Config ?? []).flatMap((c) => [c.Gateway, c.Subnet?.replace(/\.0\/\d+$/, '.1')]);
  const gateway = candidates.find((c) => c && local.has(c));
  if (!gateway) throw new Error('the bridge gateway is not an address of this machine');
  return gateway;
}

export async function egress({ created, downloads, requests }) {
  const host = await bridgeGateway();
  const big = Buffer.alloc(BIG, 7);
  const server = createServer((req, res) => {
    const body = req.url === '/big' ? big : Buffer.from('ok');
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, host, resolve));
  const port = server.address().port;
  try {
    const out = {};
    for (const policy of ['allowlist', 'open']) {
      const inst = await createInstance({ config: { container: { network: policy, allow: [`${host}:${port}`] } } });
      created.push(inst);
      await inst.prebuild();
      const sandbox = await openSandbox(inst.instance, { logger: silentLogger() });
      const result = await sandbox.run(['python3', '-c', CLIENT, `http://${host}:${port}`, String(downloads), String(requests)], { timeoutMs: 600_000 });
      if (result.exitCode !== 0) throw new Error(`${policy}: ${result.stderr.trim().split('\n').pop()}`);
      const { rates, latencies } = JSON.parse(result.stdout);
      out[policy] = { mbps: summary(rates), requestMs: summary(latencies) };
      await inst.cleanup();
      created.splice(created.indexOf(inst), 1);
    }
    return { bytes: BIG, ...out };
  } finally {
    server.close();
  }
}
