/**
 * Where start-up goes: spawn `serve` to `login` answered, with 0 and with 20 live terminals,
 * each run timed end to end, plus the server's own "terminals ready" time from its log; with
 * `--cpu-prof`, one CPU profile per run in bench/results/startup-prof/ (open in Chrome DevTools).
 *
 *   node bench/profile-startup.mjs [--runs=5] [--ttys=20] [--cpu-prof] [--compare=OTHER/dist/cli/agent-kernel.js]
 *
 * --compare: each run starts the other build's server too, right after this one's, so that
 * both see the same load.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInstance } from './lib/instance.mjs';
import { ROOT } from './lib/paths.mjs';
import { startServer, waitUntil } from './lib/server.mjs';
import { ms, summary } from './lib/stats.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const runs = option('runs', 5);
const ttys = option('ttys', 20);
const profDir = path.join(ROOT, 'bench', 'results', 'startup-prof');
const compare = args.find((a) => a.startsWith('--compare='))?.slice('--compare='.length);
const nodeArgs = args.includes('--cpu-prof') ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
if (nodeArgs.length) await mkdir(profDir, { recursive: true });

/** CPU seconds (user + system) a process has used so far: load on a shared machine does not change it much. */
async function cpuMsOf(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function timeStarts(instance, label) {
  const total = [];
  const ready = [];
  const cpu = [];
  const other = { total: [], cpu: [] };
  for (let i = 0; i < runs; i++) {
    if (compare) {
      const session = await startServer(instance.dataDir, { bin: compare });
      try {
        await session.ok('login');
        other.total.push(performance.now() - session.spawnedAt);
        other.cpu.push(await cpuMsOf(session.pid));
      } finally {
        await session.stop();
      }
    }
    const session = await startServer(instance.dataDir, { nodeArgs });
    try {
      const login = await session.ok('login');
      total.push(performance.now() - session.spawnedAt);
      cpu.push(await cpuMsOf(session.pid));
      const readyMs = Number(/"ms":(\d+)[^\n]*terminals ready/.exec(session.stderr())?.[1]);
      if (Number.isFinite(readyMs)) ready.push(readyMs);
      if (i === 0) console.log(`${label}: ${login.structuredContent.adopted.length} adopted`);
    } finally {
      await session.stop();
    }
  }
  const t = summary(total);
  const r = summary(ready);
  const c = summary(cpu);
  console.log(`${label}: spawn to login answered ${ms(t.median)} (min ${ms(t.min)}, runs ${t.runs.map((v) => v.toFixed(0)).join(' ')}); terminals ready after ${ms(r.median)} of the server's own clock; server CPU to login ${ms(c.median)} (runs ${c.runs.join(' ')})`);
  if (compare) {
    const o = summary(other.total);
    console.log(`${label}, ${compare}: spawn to login answered ${ms(o.median)} (min ${ms(o.min)}); server CPU to login ${ms(summary(other.cpu).median)}; this build / that: ${(t.median / o.median).toFixed(2)}x`);
  }
  return t;
}

const instance = await createInstance({ name: `prof-${process.pid}` });
try {
  await instance.prebuild();
  const first = await startServer(instance.dataDir);
  await first.ok('login');
  await first.stop();
  const none = await timeStarts(instance, 'no TTY');
  const session = await startServer(instance.dataDir);
  try {
    await session.ok('login');
    for (let i = 0; i < ttys; i++) {
      const { tty } = (await session.ok('open')).structuredContent;
      await session.ok('wait', { timeout: 10 });
      await session.ok('type', { tty, expect: 'bash', text: `seq 1 10000 | sed 's/^/terminal ${tty} line /'` });
      await waitUntil(session, { timeout: 50 });
    }
  } finally {
    await session.stop();
  }
  const many = await timeStarts(instance, `${ttys} TTYs`);
  console.log(`ratio ${(many.median / none.median).toFixed(2)}x; node -e 0 for comparison:`);
  const began = performance.now();
  const { execFileSync } = await import('node:child_process');
  for (let i = 0; i < 5; i++) execFileSync(process.execPath, ['-e', '0']);
  console.log(`node -e 0: ${ms((performance.now() - began) / 5)} mean of 5`);
} finally {
  await instance.cleanup();
}
