import { afterAll, beforeAll, expect, it } from 'vitest';
import { proxyContainerName } from '../../../src/sandbox/egress/proxy.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf, waitFor } from '../server/helpers.js';

describeWithEngine('a refused connection reaches the agent (MCP client, real container)', () => {
  let test: TestInstance;
  let session: StdioSession;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    session = await connectStdio(test.dataDir);
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('login names the policy and how many destinations it allows', async () => {
    const login = await session.call('login');
    expect(login.isError, textOf(login)).toBeFalsy();
    expect(textOf(login)).toContain('Network: allowlist, 2 destinations allowed');
    expect(login.structuredContent).toMatchObject({ network: { policy: 'allowlist', allowed: 2 } });
  });

  it('the wait that reports the command shows a line for the refused destination, once', async () => {
    await session.call('open');
    await session.call('wait', { timeout: 5 });
    const script = 'import urllib.request as u; u.urlopen("https://refused.example/", timeout=20)';
    const typed = await session.call('type', { tty: 0, expect: 'bash', text: `python3 -c '${script}' 2>/dev/null; echo fetched-$?` });
    expect(typed.isError, textOf(typed)).toBeFalsy();
    const notice = /network: refused refused\.example:443 \(not in this instance's allowlist, or a private address\)/;
    let text = await waitFor(session.call, /fetched-1/);
    // Usually in the same wait (the proxy's log reaches the server as squid writes it); the engine's
    // log can lag the command's end (seen on Podman at load 30), and then it is the next wait's.
    if (!notice.test(text)) text += await waitFor(session.call, notice);
    expect(text.match(new RegExp(notice.source, 'g'))).toHaveLength(1);
    const again = await session.call('wait', { timeout: 1 });
    expect(textOf(again)).not.toContain('network: refused');
  });

  it('the proxy survives a server restart, and refusals keep reaching the next server', async () => {
    const engine = await connectEngine();
    const before = await engine.docker.getContainer(proxyContainerName(test.name)).inspect();
    await session.close();
    session = await connectStdio(test.dataDir);
    expect((await session.call('login')).isError).toBeFalsy();
    const after = await engine.docker.getContainer(proxyContainerName(test.name)).inspect();
    expect([after.Id, after.State.StartedAt]).toEqual([before.Id, before.State.StartedAt]);
    await session.call('wait', { timeout: 2 });
    await session.call('type', { tty: 0, expect: 'bash', text: `python3 -c 'import urllib.request as u; u.urlopen("http://second.example/")'` });
    await waitFor(session.call, /network: refused second\.example:80 /);
  });

  it('a request with any bytes in it is a notice too, escaped: an IPv6 CONNECT, a C1 control, a line squid cannot read', async () => {
    await session.call('wait', { timeout: 1 });
    // Sent raw to the proxy: squid logs these as %5B::1%5D:443, with its own escapes, and as NONE_NONE/400 -:-.
    const lines = ['b"CONNECT [::1]:443 HTTP/1.1\\r\\n\\r\\n"', 'b"GET http://ex\\xc2\\x9bample.com/ HTTP/1.1\\r\\n\\r\\n"', 'b"garbage\\r\\n\\r\\n"'];
    const script = `import socket; [(lambda s: (s.sendall(l), s.recv(100), s.close()))(socket.create_connection(("127.0.0.1", 3128))) for l in [${lines.join(', ')}]]`;
    await session.call('type', { tty: 0, expect: 'bash', text: `python3 -c '${script}'; echo sent-$?` });
    const seen: string[] = [];
    await expect
      .poll(async () => {
        seen.push(textOf(await session.call('wait', { timeout: 2 })));
        const all = seen.join('\n');
        return ['network: refused %5B::1%5D:443 ', 'network: refused ex', 'network: refused a request the proxy could not read (garbage'].filter((n) => !all.includes(n));
      }, { timeout: 20_000 })
      .toEqual([]);
    // Whatever the request held, the notice is printable ASCII.
    for (const line of seen.join('\n').split('\n').filter((l) => l.startsWith('network: refused'))) expect(line).toMatch(/^[\x20-\x7e]+$/);
  });
});
