// scratch: kernel RSS over time under continuous output (not committed)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BIN, ROOT } from '../lib/paths.mjs';
import { createInstance } from '../lib/instance.mjs';
import { livePids, rssOf, startServer } from '../lib/server.mjs';
import { pollUntil, sleep } from '../lib/stats.mjs';
import { printer } from '../sections/lifecycle.mjs';
const dist = (rel) => import(path.join(ROOT, 'dist', rel));
const { kernelHealth } = await dist('kernel/link.js');
const { kernelSocketPath } = await dist('kernel/socket-path.js');
const minutes = Number(process.argv[2] ?? 20);
const inst = await createInstance({ name: `soak-${process.pid}` });
try {
  const child = spawn(process.execPath, [...(process.env.KFLAGS ? process.env.KFLAGS.split(' ') : []), BIN, 'kernel', inst.dataDir], { env: process.env, stdio: ['ignore', 'pipe', 'ignore'] });
  livePids.add(child.pid);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await pollUntil(() => /^READY /m.test(out), { timeoutMs: 60_000, what: 'READY' });
  const socket = kernelSocketPath(inst.paths.stateRoot);
  await pollUntil(async () => (await kernelHealth(socket).catch(() => undefined))?.terminals.state === 'ready', { timeoutMs: 120_000, what: 'ready' });
  const s = await startServer(inst.name);
  await s.ok('login');
  const { tty } = (await s.ok('open')).structuredContent;
  await s.ok('wait', { timeout: 10 });
  await s.ok('type', { tty, expect: 'bash', text: printer(2000) });
  await s.stop();
  const t0 = Date.now();
  while (Date.now() - t0 < minutes * 60_000) {
    await sleep(30_000);
    console.log(`${((Date.now() - t0) / 60000).toFixed(1)} min rss ${(await rssOf(child.pid) / 1e6).toFixed(1)} MB`);
  }
  child.kill('SIGTERM');
} finally {
  for (const pid of livePids) try { process.kill(pid, 'SIGKILL'); } catch {}
  await inst.cleanup();
}
