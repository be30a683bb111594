import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { buildLinkContainerName } from '../../../src/sandbox/egress/proxy.js';
import { connectEngine, type Engine, inspectNamed } from '../../../src/sandbox/engine/engine.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { bridgeGateway, type LocalServer, startLocalServer } from '../../helpers/local-server.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 180_000 });

/**
 * What the agent's Containerfile does on the network while it is built. Bash only (the base
 * image has no Python): a raw connection to a server on the host's bridge, and requests for
 * an allowed and a refused server through the proxy port the policy would give.
 */
const PROBE = `#!/bin/bash
gw=$1; allowed=$2; other=$3
probe() { if timeout 5 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; then echo reached; else echo refused; fi; }
get() { timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'GET http://%s/%s HTTP/1.0\\r\\nHost: %s\\r\\n\\r\\n' $1 $2 $1 >&3 && head -1 <&3 | tr -d '\\r'" 2>/dev/null || echo no-proxy; }
echo "PROBE direct=$(probe "$gw" "$other") allowed=$(get "$gw:$allowed" build-hello) other=$(get "$gw:$other" build-secret)"
`;

describeWithEngine("image builds: the agent's Containerfile gets no more network than its terminals", () => {
  let engine: Engine;
  let gateway: string;
  let allowed: LocalServer;
  let other: LocalServer;
  const instances: TestInstance[] = [];

  beforeAll(async () => {
    engine = await connectEngine();
    gateway = await bridgeGateway();
    allowed = await startLocalServer(gateway, 'hello from the allowed server');
    other = await startLocalServer(gateway, 'this server is not allowed');
  });
  afterAll(async () => {
    for (const t of instances) await t.cleanup();
    await allowed?.close();
    await other?.close();
  });

  /** Build the probe under a policy; what it printed. */
  async function probeUnder(network: string): Promise<string> {
    const t = await createTestInstance({
      config: { container: { network, allow: [`${gateway}:${allowed.port}`] } },
      // The probe as a RUN step of the agent's Containerfile (built without the cache: each policy runs it).
      containerfile: `FROM debian:bookworm-slim\nCOPY probe.sh /probe.sh\nRUN bash /probe.sh ${gateway} ${allowed.port} ${other.port}\n`,
      files: { 'system/container/probe.sh': PROBE },
    });
    instances.push(t);
    const lines: string[] = [];
    await ensureImage(engine, t.instance, { logger: silentLogger(), force: true, onProgress: (line) => lines.push(line) });
    // The build's link to the proxy is gone with the build.
    expect(await inspectNamed(engine, buildLinkContainerName(t.name))).toBeUndefined();
    return lines.find((line) => line.startsWith('PROBE ')) ?? `no probe line in: ${lines.join('\n')}`;
  }

  it('open: the engine bridge, so the probe does reach the host (the control)', async () => {
    expect(await probeUnder('open')).toMatch(/^PROBE direct=reached /);
  });

  it('allowlist: no route but the proxy, which passes only container.allow', async () => {
    const before = other.requests.length;
    expect(await probeUnder('allowlist')).toBe('PROBE direct=refused allowed=HTTP/1.1 200 OK other=HTTP/1.1 403 Forbidden');
    expect(allowed.requests).toContain('GET /build-hello');
    expect(other.requests.slice(before)).toEqual([]);
  });

  it('none: no route at all', async () => {
    const before = allowed.requests.length;
    expect(await probeUnder('none')).toBe('PROBE direct=refused allowed=no-proxy other=no-proxy');
    expect(allowed.requests.length).toBe(before);
  });
});
