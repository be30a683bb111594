/**
 * The long-lived kernel: login at the start of a tick with the kernel running (serve bridges to
 * it) vs a fresh server; the kernel's RSS over minutes of continuous output nobody waits for
 * (between ticks); and the fault run with the kernel SIGKILLed at random moments under watch's
 * supervision (KernelSupervisor, as watch runs it), the client's bridge reconnecting.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ROOT, BIN } from '../lib/paths.mjs';
import { livePids, rssOf, startServer } from '../lib/server.mjs';
import { seededRandom } from '../lib/seeded-random.mjs';
import { median, pollUntil, sleep, summary } from '../lib/stats.mjs';
import { PrinterRun, printer } from './lifecycle.mjs';

const dist = (rel) => import(path.join(ROOT, 'dist', rel));
const [{ KernelSupervisor }, { kernelHealth }, { kernelSocketPath }, { silentLogger }, { registerInstance, unregisterInstance }] = await Promise.all([
  dist('kernel/supervisor/kernel-supervisor.js'),
  dist('kernel/client/link.js'),
  dist('kernel/socket-path.js'),
  dist('log/logger.js'),
  dist('config/registry.js'),
]);

/**
 * The instance registered while `run` runs, as kernel-runner init leaves an agent's: ticks serve
 * registered instances (by data directory), and `serve NAME` finds a name in the registry.
 */
async function asRegistered(instance, run) {
  await registerInstance(instance.name, instance.dataDir);
  try {
    return await run();
  } finally {
    await unregisterInstance(instance.name);
  }
}

/** `agent-kernel kernel <dir>` as a child; resolves once READY and its terminals are up. */
async function startKernel(instance) {
  const child = spawn(process.execPath, [BIN, 'kernel', instance.dataDir], { env: process.env, stdio: ['ignore', 'pipe', 'ignore'] });
  livePids.add(child.pid);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await pollUntil(() => /^READY /m.test(out) || (child.exitCode !== null ? Promise.reject(new Error('the kernel exited')) : false), { timeoutMs: 60_000, what: 'the kernel READY' });
  const socket = kernelSocketPath(instance.paths.stateRoot);
  await pollUntil(async () => (await kernelHealth(socket).catch(() => undefined))?.terminals.state === 'ready', { timeoutMs: 120_000, what: 'the kernel terminals' });
  return {
    pid: child.pid,
    socket,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      livePids.delete(child.pid);
    },
  };
}

const NULL_SERVER = path.join(ROOT, 'bench', 'lib', 'null-server.mjs');

/** CPU time a process has used so far, ms (/proc/PID/schedstat, in ns): what a login costs whatever the load. */
async function cpuMsOf(pid) {
  return Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[0]) / 1e6;
}

/** Spawn serve (or another bin), log in, time it from the spawn, and the CPU the process used until then; then close. */
async function timedLogin(target, bin = BIN) {
  const session = await startServer(target, { bin });
  try {
    const login = await session.ok('login');
    const ms = performance.now() - session.spawnedAt;
    return { ms, cpu: await cpuMsOf(session.pid), role: login.structuredContent.role };
  } finally {
    await session.stop();
  }
}

/** `node -e 0`: Node alone, from spawn to exit, and the CPU it used (read as its last act). */
function nodeStart() {
  const began = performance.now();
  const out = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("fs").readFileSync("/proc/self/schedstat", "utf8"))']);
  return { ms: performance.now() - began, cpu: Number(out.stdout.toString().split(' ')[0]) / 1e6 };
}

/** Wall and CPU figures of a list of timings. */
function figures(timings) {
  return { ...summary(timings.map((t) => t.ms)), cpu: summary(timings.map((t) => t.cpu)) };
}

/**
 * login at the start of a tick: a fresh server (no kernel) vs serve bridged to the running kernel,
 * each with `ttys` live terminals; and, in the same run, the floor of any server a client starts as
 * a process (Node's own start, and a do-nothing MCP server answering the same login), interleaved
 * with the bridged runs so that they see the same load.
 */
export function kernelLogin({ instance, runs, ttys = 5 }) {
  return asRegistered(instance, () => timeLogins(instance, runs, ttys));
}

async function timeLogins(instance, runs, ttys) {
  // Some live terminals, as an agent leaves them between ticks (a fresh server re-adopts them).
  const setup = await startServer(instance.dataDir);
  try {
    await setup.ok('login');
    for (let i = 0; i < ttys; i++) {
      const { tty } = (await setup.ok('open')).structuredContent;
      await setup.ok('wait', { timeout: 10 });
      await setup.ok('type', { tty, expect: 'bash', text: `seq 1 2000 | sed 's/^/terminal ${tty} line /'` });
    }
    await setup.ok('wait', { timeout: 10 });
  } finally {
    await setup.stop();
  }
  const fresh = [];
  for (let i = 0; i < runs; i++) fresh.push(await timedLogin(instance.dataDir));
  const kernel = await startKernel(instance);
  const bridged = [];
  const floor = [];
  const node = [];
  const roles = new Set();
  try {
    // A first login writes the bridge's code cache (as the first tick after an install does).
    await timedLogin(instance.dataDir);
    for (let i = 0; i < runs; i++) {
      // As a tick's --mcp-config runs it: serve <data dir>.
      const login = await timedLogin(instance.dataDir);
      bridged.push(login);
      roles.add(login.role);
      floor.push(await timedLogin('floor', NULL_SERVER));
      node.push(nodeStart());
    }
  } finally {
    await kernel.stop();
  }
  return { ttys, fresh: figures(fresh), kernel: figures(bridged), floor: figures(floor), node: figures(node), roles: [...roles] };
}

async function bytesUnder(dir) {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? await bytesUnder(full) : (await stat(full).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** The kernel's RSS (median of 5 samples) and the instance's host-private disk use. */
async function sample(pid, instance) {
  const rss = [];
  for (let i = 0; i < 5; i++) {
    rss.push(await rssOf(pid));
    await sleep(200);
  }
  return { rss: median(rss), disk: await bytesUnder(instance.paths.stateRoot) };
}

/**
 * Continuous output that nobody waits for (the gap between ticks) for `minutes`: the kernel's RSS
 * every 30 s, compared between half-way and the end (its heap grows to its working size in the
 * first minutes: the run of 2026-11-27 04:56Z went 92 MB at 30 s, 102 MB at 2 min, 116.4 MB at
 * 6 min, then 117.4 MB at 20 min), and the disk the instance's files take.
 */
export function kernelSoak({ instance, minutes, rate = 2000 }) {
  return asRegistered(instance, () => soak(instance, minutes, rate));
}

async function soak(instance, minutes, rate) {
  const kernel = await startKernel(instance);
  const session = await startServer(instance.name);
  try {
    await session.ok('login');
    const { tty } = (await session.ok('open')).structuredContent;
    await session.ok('wait', { timeout: 10 });
    await session.ok('type', { tty, expect: 'bash', text: printer(rate) });
    await session.stop();
    const began = Date.now();
    const series = [];
    let before;
    const warm = (minutes * 60_000) / 2;
    while (Date.now() - began < minutes * 60_000 - 30_000) {
      await sleep(30_000);
      series.push({ s: Math.round((Date.now() - began) / 1000), rss: await rssOf(kernel.pid) });
      if (!before && Date.now() - began >= warm) before = await sample(kernel.pid, instance);
    }
    await sleep(Math.max(0, minutes * 60_000 - (Date.now() - began)));
    const after = await sample(kernel.pid, instance);
    const end = await startServer(instance.name);
    try {
      await end.ok('login');
      await end.ok('type', { tty, expect: 'python3', text: 'C-c' });
      await end.ok('wait', { timeout: 10 });
      await end.ok('close', { tty });
    } finally {
      await end.stop();
    }
    return { minutes, rate, warmSeconds: warm / 1000, before, after, ratio: after.rss / before.rss, series };
  } finally {
    await kernel.stop();
  }
}

const MOMENTS = ['during output', 'during a wait', 'between reply and save'];

/**
 * The fault run, with the kernel as the victim: watch's supervisor runs it; one client session
 * (serve bridged to the kernel, as a tick's) waits on a terminal that prints ~`rate` numbered lines
 * a second; the kernel is SIGKILLed `kills` times at random moments; the supervisor starts
 * another, the bridge reconnects, and the client logs in again. Every line must reach the client.
 */
export function kernelFaults({ instance, kills = 50, rate = 1000, seed = Number(process.env.FAULT_SEED ?? Date.now() % 100_000) }) {
  return asRegistered(instance, () => faults(instance, kills, rate, seed));
}

async function faults(instance, kills, rate, seed) {
  const random = seededRandom(seed);
  const socket = kernelSocketPath(instance.paths.stateRoot);
  const supervisor = new KernelSupervisor({ instance: instance.instance, env: process.env, logger: silentLogger(), tickRunning: () => false, heartbeatMs: 1000 });
  supervisor.start();
  await supervisor.firstAttempt;
  const run = new PrinterRun();
  const { record } = run;
  const recoveries = [];
  const moments = Object.fromEntries(MOMENTS.map((m) => [m, 0]));
  const kernelPid = async () => (await pollUntil(() => kernelHealth(socket).catch(() => undefined), { timeoutMs: 60_000, what: 'the kernel' })).pid;
  const session = await startServer(instance.name);
  const began = performance.now();
  try {
    await run.start(session, rate);
    for (let k = 0; k < kills; k++) {
      const moment = MOMENTS[Math.floor(random() * MOMENTS.length)];
      moments[moment] += 1;
      const pid = await kernelPid();
      record(await session.call('wait', { timeout: 0 }));
      if (moment === 'during output') {
        await sleep(random() * 300);
        process.kill(pid, 'SIGKILL');
      } else if (moment === 'during a wait') {
        const pending = session.call('wait', { timeout: random() * 0.5 }).then(record, () => undefined);
        await sleep(random() * 400);
        process.kill(pid, 'SIGKILL');
        await pending;
      } else {
        record(await session.call('wait', { timeout: random() * 0.3 }));
        process.kill(pid, 'SIGKILL');
      }
      const killedAt = performance.now();
      // The bridge reconnects once the supervisor has started another kernel; log in there.
      for (;;) {
        const login = await session.call('login');
        if (!login.isError) break;
        await sleep(100);
      }
      recoveries.push(performance.now() - killedAt);
      // A kernel killed within a second of its READY counts as a crash loop, and the supervisor
      // backs off (0.5 s, 1 s, ... 30 s): let each serve that second, so the row times restarts,
      // not the back-off (the run of 2026-11-27 03:33Z, without it: 0.7 s, 0.7 s, 1.1 s, ... 30.8 s).
      await sleep(1_000);
    }
    const { verdict, printed, unreported } = await run.end(session);
    return {
      seed,
      kills,
      moments,
      restarts: supervisor.status().restarts,
      seconds: (performance.now() - began) / 1000,
      printed,
      lost: verdict.lost.length + Math.max(0, unreported),
      announcedGone: verdict.announcedGone,
      lostLines: verdict.lost.slice(0, 50),
      unlabelledRepeats: verdict.unlabelledRepeats.length,
      labelledRepeats: verdict.labelledRepeats,
      inconsistentElisions: verdict.inconsistentElisions,
      recovery: summary(recoveries),
      pass: Number.isFinite(printed) && unreported === 0 && verdict.lost.length === 0 && verdict.unlabelledRepeats.length === 0 && verdict.inconsistentElisions === 0 && verdict.wrongGoneCounts === 0,
    };
  } finally {
    await session.stop();
    await supervisor.stop();
  }
}
