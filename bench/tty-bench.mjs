/**
 * Terminal benchmarks: printed figures with their baselines, measured in one run (not
 * timed tests). Run with `node bench/tty.mjs [docker|host]...` (default: docker, then host).
 *
 *  1. type then wait for `true`: shell integration (OSC 133) vs a 1.5 s silence settle
 *  2. `seq 1 1000000` through a terminal vs the same output over a raw exec pipe
 *  3. server RSS with 20 terminals holding 10k lines of scrollback each
 *  4. re-adoption time of those 20 terminals by a new server
 */
import { createInstance } from './lib/instance.mjs';
import { ROOT } from './lib/paths.mjs';

// The built code (npm run build): Node 20 cannot run TypeScript.
const dist = (rel) => import(`${ROOT}/dist/${rel}`);
const [{ silentLogger }, { openSandbox }, { tmuxArgv, tmuxSocketName }, { TtyManager }] = await Promise.all([
  dist('log/logger.js'),
  dist('sandbox/container/open-sandbox.js'),
  dist('tty/host/tmux-server.js'),
  dist('tty/tty-manager.js'),
]);

/** Stop the bench's tmux server and remove its socket file (tmux 3.3 leaves it behind). */

async function killTmuxServer(sandbox, socket) {
  const env = { TMUX: '' };
  const where = await sandbox.run(tmuxArgv(socket, 'display', '-p', '#{socket_path}'), { env }).catch(() => undefined);
  await sandbox.run(tmuxArgv(socket, 'kill-server'), { env }).catch(() => {});
  const file = where?.exitCode === 0 ? where.stdout.trim() : '';
  if (file) await sandbox.run(['rm', '-f', file]).catch(() => {});
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function ms(value) {
  return `${value.toFixed(1)} ms`;
}

async function settleBaseline(manager) {
  // A bash without shell integration: wait can only notice the end by silence.
  const { tty } = await manager.open({ command: 'bash --norc --noprofile -i' });
  await manager.wait({ timeoutMs: 10_000 });
  const times = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await manager.type({ tty, expect: 'bash', text: 'true' });
    await manager.wait({ timeoutMs: 10_000 });
    times.push(performance.now() - started);
  }
  await manager.close(tty);
  return times;
}

async function integrated(manager) {
  const { tty } = await manager.open();
  await manager.wait({ timeoutMs: 10_000 });
  const times = [];
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    await manager.type({ tty, expect: 'bash', text: 'true' });
    const result = await manager.wait({ timeoutMs: 10_000 });
    if (result.reason !== 'command-finished') throw new Error(`unexpected wait reason ${result.reason}`);
    times.push(performance.now() - started);
  }
  await manager.close(tty);
  return times;
}

async function throughput(manager, sandbox) {
  const bytes = 6_888_896; // seq 1 1000000 | wc -c
  const rawTimes = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const result = await sandbox.run(['seq', '1', '1000000'], { maxOutputBytes: 2 * bytes });
    if (result.stdout.length !== bytes) throw new Error(`raw pipe gave ${result.stdout.length} bytes`);
    rawTimes.push(performance.now() - started);
  }
  const { tty } = await manager.open();
  await manager.wait({ timeoutMs: 10_000 });
  const ttyTimes = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await manager.type({ tty, expect: 'bash', text: 'seq 1 1000000' });
    const result = await manager.wait({ timeoutMs: 60_000 });
    if (result.reason !== 'command-finished') throw new Error(`unexpected wait reason ${result.reason}`);
    ttyTimes.push(performance.now() - started);
  }
  await manager.close(tty);
  // tmux alone (no client attached): the floor for any design that keeps terminals in tmux.
  const tmuxTimes = [];
  for (let i = 0; i < 3; i++) {
    const socket = `bench-raw-${process.pid}`;
    const script = `tmux -L ${socket} -f /dev/null new-session -d -x 120 -y 40 "seq 1 1000000; tmux -L ${socket} wait-for -S done; sleep 60"; tmux -L ${socket} wait-for done; s=$(tmux -L ${socket} display -p '#{socket_path}'); tmux -L ${socket} kill-server; rm -f "$s"`;
    const started = performance.now();
    await sandbox.run(['sh', '-c', script], { env: { TMUX: '' } });
    tmuxTimes.push(performance.now() - started);
  }
  const raw = median(rawTimes);
  const tmuxOnly = median(tmuxTimes);
  const through = median(ttyTimes);
  const rate = (t) => `${(bytes / 1e6 / (t / 1000)).toFixed(1)} MB/s`;
  console.log(`  seq 1 1000000, raw exec pipe (baseline): ${ms(raw)} (${rate(raw)})`);
  console.log(`  seq 1 1000000 in a tmux pane, no client:  ${ms(tmuxOnly)} (${rate(tmuxOnly)}) (baseline: tmux alone)`);
  console.log(`  seq 1 1000000 through a terminal:        ${ms(through)} (${rate(through)}), ${((raw / through) * 100).toFixed(0)}% of the raw rate, ${((tmuxOnly / through) * 100).toFixed(0)}% of tmux alone`);
}

async function memoryAndAdoption(instance, sandbox, manager) {
  global.gc?.();
  const before = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  const ttys = [];
  for (let i = 0; i < 20; i++) ttys.push((await manager.open()).tty);
  await manager.wait({ timeoutMs: 30_000 });
  for (const tty of ttys) {
    await manager.type({ tty, expect: 'bash', text: `seq 1 10000 | sed 's/^/terminal ${tty} line /'` });
    await manager.wait({ timeoutMs: 30_000 });
  }
  global.gc?.();
  const after = process.memoryUsage().rss;
  console.log(`  RSS before opening terminals (baseline): ${(before / 1e6).toFixed(0)} MB`);
  const heapAfter = process.memoryUsage().heapUsed;
  console.log(`  RSS with 20 terminals x 10k lines:       ${(after / 1e6).toFixed(0)} MB (+${((after - before) / 1e6).toFixed(0)} MB; JS heap +${((heapAfter - heapBefore) / 1e6).toFixed(0)} MB)`);
  const adoptTimes = [];
  let current = manager;
  for (let i = 0; i < 3; i++) {
    await current.dispose();
    const started = performance.now();
    current = await TtyManager.start({ instance, sandbox, logger: silentLogger() });
    adoptTimes.push(performance.now() - started);
    if (current.adoptReport.adopted.length !== 20) throw new Error(`adopted ${current.adoptReport.adopted.length} terminals`);
  }
  console.log(`  re-adoption of 20 terminals (start of a new server): median ${ms(median(adoptTimes))} (${adoptTimes.map(ms).join(', ')})`);
  for (const tty of ttys) await current.close(tty);
  return current;
}

async function bench(backend) {
  const test = await createInstance({
    name: `bench-${process.pid}-${backend}`,
    config: backend === 'host' ? { container: { backend: 'host' } } : {},
  });
  const instance = test.instance;
  const logger = silentLogger();
  console.log(`\n${backend}:`);
  const sandbox = await openSandbox(instance, { logger });
  console.log(`  sandbox: ${sandbox.description}`);
  let manager = await TtyManager.start({ instance, sandbox, logger });
  try {
    // Memory first, while the process is fresh; it also leaves 20 terminals for the re-adoption figure.
    manager = await memoryAndAdoption(instance, sandbox, manager);
    const settle = await settleBaseline(manager);
    const marks = await integrated(manager);
    console.log(`  type + wait for \`true\`, 1.5 s silence settle (baseline): median ${ms(median(settle))}`);
    console.log(`  type + wait for \`true\`, shell integration (OSC 133):     median ${ms(median(marks))}, p90 ${ms([...marks].sort((a, b) => a - b)[Math.floor(marks.length * 0.9)])}`);
    await throughput(manager, sandbox);
  } finally {
    await manager.dispose().catch(() => {});
    await killTmuxServer(sandbox, tmuxSocketName(sandbox, instance.name));
    await test.cleanup();
  }
}

// One backend per process (bench/tty.mjs starts one for each), so memory figures start fresh.
const backend = process.argv[2] === 'host' ? 'host' : 'docker';
await bench(backend);
