/**
 * Where the server's time goes while a TTY streams: `seq 1 1000000` and a 50 MB `cat`
 * through one terminal, the server run with `--cpu-prof`. Prints wall time, CPU seconds of
 * the server and of tmux, and the profile's top functions by self time.
 *
 *   node bench/profile-throughput.mjs [--no-prof] [--trace-gc]
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, tmuxPids, totalCpu } from './lib/cpu.mjs';
import { createInstance } from './lib/instance.mjs';
import { rawExec } from './lib/raw-exec.mjs';
import { startServer, waitUntil } from './lib/server.mjs';

async function pidsOf(names) {
  const out = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
    if (names.includes(comm)) out.push(Number(pid));
  }
  return out;
}

const prof = !process.argv.includes('--no-prof');
const traceGc = process.argv.includes('--trace-gc');
const dir = await mkdtemp(path.join(os.tmpdir(), 'ak-prof-'));
const nodeArgs = [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...(traceGc ? ['--trace-gc'] : [])];
const BIG = '/tmp/agent-kernel-prof-50m.txt';
const inst = await createInstance({ name: `prof-${process.pid}` });
try {
  await inst.prebuild();
  const session = await startServer(inst.dataDir, { nodeArgs });
  await session.ok('login');
  await rawExec(inst.name, ['sh', '-c', `head -c 37500000 /dev/urandom | base64 -w 100 > ${BIG}`]);
  const { tty } = (await session.ok('open')).structuredContent;
  await session.ok('wait', { timeout: 10 });
  const tmux = await tmuxPids(inst.name);
  console.log(`tmux pids: ${JSON.stringify(tmux)}`);
  for (const [label, command, bytes] of [
    ['seq 1 1000000', 'seq 1 1000000', 6_888_896],
    ['50 MB cat', `cat ${BIG}`, 50_500_000],
  ]) {
    const aloneBegan = performance.now();
    const sock = `prof-alone-${process.pid}`;
    const t = `tmux -L ${sock} -f /dev/null`;
    const alone = await rawExec(inst.name, ['sh', '-c', `${t} new-session -d -x 120 -y 40 "${command}; ${t} wait-for -S done; sleep 60"; ${t} wait-for done; sed 's/.*) //' /proc/$(${t} display -p '#{pid}')/stat | cut -d' ' -f12,13; s=$(${t} display -p '#{socket_path}'); ${t} kill-server; rm -f "$s"`]);
    const aloneCpu = alone.head.trim().split(' ').reduce((a, b) => a + Number(b), 0) / 100;
    console.log(`${label}: tmux alone ${((performance.now() - aloneBegan) / 1000).toFixed(2)} s, its server ${(aloneCpu / (bytes / 1e6)).toFixed(4)} CPU s/MB`);
    const dockerd = await pidsOf(['dockerd', 'containerd-shim', 'containerd-shim-runc-v2', 'containerd']);
    const before = [await cpuSeconds(session.pid), await totalCpu(tmux.server), await totalCpu(tmux.control), await totalCpu(dockerd)];
    const began = performance.now();
    await session.ok('type', { tty, expect: 'bash', text: command });
    const waits = await waitUntil(session, { timeout: 50, maxCalls: 50 });
    const wall = (performance.now() - began) / 1000;
    const after = [await cpuSeconds(session.pid), await totalCpu(tmux.server), await totalCpu(tmux.control), await totalCpu(dockerd)];
    const [server, tmuxServer, control, engine] = after.map((a, i) => a - before[i]);
    const mbs = bytes / 1e6;
    console.log(
      `${label}: ${wall.toFixed(2)} s wall (${waits.length} waits); CPU s/MB: server ${(server / mbs).toFixed(4)}, tmux server ${(tmuxServer / mbs).toFixed(4)}, tmux control client ${(control / mbs).toFixed(4)}, engine (dockerd, containerd) ${(engine / mbs).toFixed(4)}`,
    );
  }
  await session.stop();
  if (traceGc) console.log(session.stderr().split('\n').filter((l) => /Scavenge|Mark-Compact/.test(l)).length, 'GC lines');
  if (prof) {
    const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
    const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
    const dt = new Map();
    const { nodes, samples, timeDeltas } = profile;
    const byId = new Map(nodes.map((n) => [n.id, n]));
    for (let i = 0; i < samples.length; i++) dt.set(samples[i], (dt.get(samples[i]) ?? 0) + (timeDeltas[i] ?? 0));
    const self = new Map();
    let total = 0;
    for (const [id, us] of dt) {
      const n = byId.get(id);
      const f = n.callFrame;
      const key = `${f.functionName || '(anon)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${f.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + us);
      total += us;
    }
    console.log(`profile ${path.join(dir, file)}: ${(total / 1e6).toFixed(2)} s sampled; top self time:`);
    for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${(us / 1e3).toFixed(0).padStart(7)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
} finally {
  await inst.cleanup();
}
