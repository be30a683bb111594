import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { TEST_IMAGE, type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 240_000 });

const execFileAsync = promisify(execFile);

const SECRET = 'CANARY-host-loopback-9e4b';

/**
 * The agent edits its own Containerfile, and the engine's daemon downloads an `ADD <url>` itself,
 * from the host's network namespace: the host's loopback services (and a cloud's metadata
 * address) answer it, whatever container.network says, and the answer lands in the agent's
 * image. A service on the host's loopback that the container cannot reach (the canary) must
 * never be asked, however the Containerfile spells the ADD, and even when it is swapped in
 * between the host's check and the build.
 */
describeWithEngine('escape: a Containerfile that makes the engine fetch from the host network', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let server: http.Server;
  let url: string;
  let connections = 0;

  async function agent(script: string): Promise<void> {
    const result = await sandbox.run(['sh', '-c', script], { timeoutMs: 60_000 });
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
  }

  /** The agent writes its Containerfile from inside (printf keeps every byte). */
  async function writeContainerfile(text: string): Promise<void> {
    const file = path.join(test.dataDir, 'system/container/Containerfile');
    const result = await sandbox.run(['sh', '-c', 'printf "%s" "$1" > "$2"', 'sh', text, file]);
    expect(result.exitCode).toBe(0);
  }

  beforeAll(async () => {
    // Counts requests as well as connections: the daemon keeps a connection open and asks again on it.
    server = http.createServer((_req, res) => {
      connections += 1;
      res.end(`${SECRET}\n`);
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret`;
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    // The container has no way to it: its loopback is its own.
    expect((await sandbox.run(['python3', '-c', `import urllib.request; urllib.request.urlopen(${JSON.stringify(url)}, timeout=3)`])).exitCode).not.toBe(0);
    expect(connections).toBe(0);
  });
  afterAll(async () => {
    await test?.cleanup();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** A base image the operator lists (container.base_images), built by the host from a trusted text; removed after. */
  const bases: string[] = [];
  async function operatorBase(containerfile: string): Promise<string> {
    const tag = `agent-kernel-test/membrane-base-${Math.random().toString(16).slice(2, 8)}:1`;
    bases.push(tag);
    // Building it runs no trigger and fetches nothing (the ONBUILD step runs in a build FROM it).
    await execFileAsync('sh', ['-c', 'printf "%s" "$1" | docker build -q -t "$2" -', 'sh', containerfile, tag]);
    return tag;
  }
  afterAll(async () => {
    for (const tag of bases) await execFileAsync('docker', ['rmi', '-f', tag]).catch(() => undefined);
  });

  // Each spelling the engine turns back into an ADD from the URL (seen reaching the host's loopback on the code before).
  const spellings: Array<[string, (u: string) => string | Promise<string>]> = [
    ['plain', (u) => `ADD ${u} /secret`],
    ['double quotes', (u) => `ADD "${u}" /secret`],
    ['single quotes', (u) => `ADD '${u}' /secret`],
    ['an escaped letter', (u) => `ADD ${u.replace('http', 'h\\ttp')} /secret`],
    ['an escaped colon', (u) => `ADD ${u.replace('http:', 'http\\:')} /secret`],
    ['empty quotes inside', (u) => `ADD ${u.replace('http', "ht''tp")} /secret`],
    ['JSON form with quotes inside', (u) => `ADD ["'${u}'", "/secret"]`],
    ['a flag, then quotes', (u) => `ADD --chown=0:0 "${u}" /secret`],
    ['a continuation inside the URL (joined with no space)', (u) => `ADD http:/\\\n${u.slice('http:/'.length)} /secret`],
    ['ONBUILD ADD in a base the operator lists', async (u) => `FROM ${await operatorBase(`FROM ${TEST_IMAGE}\nONBUILD ADD "${u}" /secret\n`)}\nRUN true`],
    ['the backtick escape directive', (u) => `ADD ${u.replace('http', 'h`ttp')} /secret`],
    ['an ARG default', (u) => `ARG WHERE=${u}\nADD $WHERE /secret`],
    ['an ENV of an earlier stage', (u) => `FROM ${TEST_IMAGE} AS a\nENV WHERE=${u}\nFROM a\nADD \${WHERE} /secret`],
    ['an ENV the base image carries', async (u) => `FROM ${await operatorBase(`FROM ${TEST_IMAGE}\nENV WHERE=${u}\n`)}\nADD $WHERE /secret`],
    ['lower case, tabs', (u) => `add\t"${u}"\t/secret`],
    ['a JSON escape', (u) => `ADD ["${u.replace('http', '\\u0068ttp')}", "/secret"]`],
    ['a NEL before the instruction', (u) => `\u0085ADD "${u}" /secret`],
    ['ONBUILD in an earlier stage', (u) => `FROM ${TEST_IMAGE} AS a\nONBUILD ADD "${u}" /secret\nFROM a`],
    // Podman's builder (openshift/imagebuilder) reads these two as ADD <url> and fetched it from the host's loopback on the code before.
    ['a form feed in the escape directive (no directive for Podman, so \\ continues)', (u) => `#\fescape=\`\nFROM ${TEST_IMAGE}\nADD h\\\n${u.slice(1)} /secret`],
    ['a line ending in two backslashes (continued by Podman)', (u) => `ADD h\\\\\n${u.slice(1)} /secret`],
    // Podman matches stage names case-sensitively and allows any: it pulled this "stage" from the host's loopback.
    ['a stage name that differs in case only (an image to Podman)', (u) => `FROM ${TEST_IMAGE} AS ${new URL(u).host}/X\nFROM ${TEST_IMAGE}\nCOPY --from=${new URL(u).host}/x /etc/hostname /secret`],
  ];

  it.each(spellings)('refuses an ADD from a URL (%s) before the engine sees it: the host service is never asked, no image is made', async (what, line) => {
    const directive = what === 'the backtick escape directive' ? '# escape=`\n' : '';
    const body = await line(url);
    const text = body.startsWith('FROM ') || body.startsWith('#') ? `${directive}${body}\n` : `${directive}FROM ${TEST_IMAGE}\n${body}\n`;
    const instance = await test.reload();
    const configured = { container: { network: 'none', base_images: [TEST_IMAGE, ...bases] } };
    await writeFile(instance.paths.operatorConfig, JSON.stringify(configured));
    await writeContainerfile(text);
    const engine = await connectEngine();
    const before = connections;
    const outcome = await ensureImage(engine, await test.reload(), { logger: silentLogger(), force: true }).then(
      (image) => `built ${image.tag}`,
      (error: Error) => error.message,
    );
    expect(connections - before).toBe(0);
    expect(outcome).toMatch(/is not built: the engine would fetch what it names itself/);
  });

  it('never builds a URL swapped into the Containerfile between the check and the build (many builds)', async () => {
    const honest = `FROM ${TEST_IMAGE}\n`;
    const evil = `FROM ${TEST_IMAGE}\nADD ${url} /secret\n`;
    const dir = path.join(test.dataDir, 'system/container');
    // The agent flips the file between the honest text and the evil one, atomically, as fast as it can.
    const stop = path.join(test.dataDir, '.stop-flip');
    const flipping = sandbox.run(
      // (Written beside the context, not in it, then renamed in: one rename each, so the file is always whole.)
      ['sh', '-c', `while [ ! -e '${stop}' ]; do printf '%s' "$1" > '${test.dataDir}/.h' && mv -f '${test.dataDir}/.h' '${dir}/Containerfile'; printf '%s' "$2" > '${test.dataDir}/.e' && mv -f '${test.dataDir}/.e' '${dir}/Containerfile'; done`, 'sh', honest, evil],
      { timeoutMs: 200_000 },
    );
    const engine = await connectEngine();
    const before = connections;
    const outcomes: string[] = [];
    try {
      for (let round = 0; round < 15; round++) {
        const instance = await test.reload();
        outcomes.push(
          await ensureImage(engine, instance, { logger: silentLogger(), force: true }).then(
            () => 'built',
            (error: Error) => (/is not built: the engine would fetch/.test(error.message) ? 'refused' : `failed: ${error.message.split('\n')[0]}`),
          ),
        );
      }
    } finally {
      await agent(`touch '${stop}'`);
      await flipping;
      await agent(`rm -f '${stop}'`);
    }
    expect(connections - before).toBe(0);
    // Both happened: honest builds went through, evil ones were refused.
    expect(outcomes).toContain('refused');
    expect(outcomes.filter((o) => o.startsWith('failed'))).toEqual([]);
  });
});
