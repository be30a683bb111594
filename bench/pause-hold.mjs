/**
 * How well a paused server holds a flooding program back (the throttle, output-backpressure.ts),
 * with two cores kept busy, on both tmux backends: the control client's reads while paused
 * (NUDGE_MS in src/tty/host/control-client.ts) against plain pausing, its baseline, in the same run.
 *
 *   npm run build && bash scripts/with-engine.sh node bench/pause-hold.mjs [--trials=80] [docker] [host]
 *
 * Each trial lets `seq` flood a terminal for 50-200 ms, pauses the server, waits 0.7 s for the
 * buffers on the way to fill, then reads how much seq wrote in the next 0.5 s (its `wchar`).
 * A pause that held it writes nothing; "ran on" counts the pauses where it wrote over 1 MB.
 * Not part of `npm run bench`: about 2 minutes per backend and mode at 80 trials.
 */
import { spawn } from 'node:child_process';
import { createInstance } from './lib/instance.mjs';
import { ROOT } from './lib/paths.mjs';

const dist = (rel) => import(`${ROOT}/dist/${rel}`);
const [{ silentLogger }, { openSandbox }, { tmuxArgv, tmuxSocketName }, { TtyManager }, { TmuxControlClient }] = await Promise.all([
  dist('log/logger.js'),
  dist('sandbox/container/open-sandbox.js'),
  dist('tty/host/tmux-server.js'),
  dist('tty/tty-manager.js'),
  dist('tty/host/control-client.js'),
]);

const args = process.argv.slice(2);
const trials = Number(args.find((a) => a.startsWith('--trials='))?.slice('--trials='.length) ?? 80);
const chosen = args.filter((a) => a === 'docker' || a === 'host');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The baseline: pausing the stream and nothing more (before 2026-11-25).
const nudged = TmuxControlClient.prototype.throttle;
function plain(paused) {
  if (paused) this.process.stdout.pause();
  else this.process.stdout.resume();
}

async function trialsOn(manager, sandbox, mode) {
  TmuxControlClient.prototype.throttle = mode === 'plain' ? plain : nudged;
  const host = manager.ctx.host;
  const throttle = host.throttle.bind(host);
  // The manager's own backpressure is held off: the trials pause and resume.
  host.throttle = () => undefined;
  const { tty } = await manager.open();
  await manager.wait({ timeoutMs: 10_000 });
  const name = `akb${100_000 + Math.floor(Math.random() * 900_000)}`;
  const script = `for p in /proc/[0-9]*; do [ "$(head -c ${name.length + 1} $p/cmdline 2>/dev/null | tr '\\0' ' ')" = '${name} ' ] && sed -n 's/^wchar: //p' $p/io; done`;
  const written = async () => Number((await sandbox.run(['sh', '-c', script])).stdout.trim() || Number.NaN);
  await manager.type({ tty, expect: 'bash', text: `bash -c 'exec -a ${name} seq 1 10000000000'` });
  for (let until = Date.now() + 10_000; !((await written()) > 100_000) && Date.now() < until; ) await sleep(100);
  const ranOn = [];
  try {
    for (let i = 0; i < trials; i++) {
      throttle(false);
      await sleep(50 + Math.random() * 150);
      throttle(true);
      await sleep(700);
      const before = await written();
      await sleep(500);
      const wrote = (await written()) - before;
      if (wrote > 1_000_000) ranOn.push(wrote * 2);
    }
  } finally {
    throttle(false);
    delete host.throttle;
    TmuxControlClient.prototype.throttle = nudged;
  }
  await manager.type({ tty, expect: 'bash', text: 'C-c' });
  await manager.wait({ timeoutMs: 20_000 });
  await manager.close(tty);
  const rates = ranOn.sort((a, b) => a - b).map((r) => (r / 1e6).toFixed(1));
  console.log(`  ${mode === 'plain' ? 'plain pause (baseline)' : 'paused, reading every 200 ms'}: ran on in ${ranOn.length} of ${trials} pauses${rates.length ? `, at ${rates.join(', ')} MB/s` : ''}`);
}

async function bench(backend) {
  const test = await createInstance({ name: `bench-${process.pid}-${backend}`, config: backend === 'host' ? { container: { backend: 'host' } } : {} });
  const logger = silentLogger();
  const sandbox = await openSandbox(test.instance, { logger });
  const manager = await TtyManager.start({ instance: test.instance, sandbox, logger });
  console.log(`\n${backend} (${sandbox.description}):`);
  try {
    for (const mode of ['plain', 'nudged']) await trialsOn(manager, sandbox, mode);
  } finally {
    await manager.dispose().catch(() => {});
    await sandbox.run(tmuxArgv(tmuxSocketName(sandbox, test.instance.name), 'kill-server'), { env: { TMUX: '' } }).catch(() => {});
    await test.cleanup();
  }
}

// Two cores kept busy, as under an agent's own build.
const load = [0, 1].map(() => spawn('sh', ['-c', 'while :; do dd if=/dev/zero bs=1M count=200 2>/dev/null | gzip -1 >/dev/null; done'], { stdio: 'ignore', detached: true }));
try {
  for (const backend of chosen.length ? chosen : ['docker', 'host']) await bench(backend);
} finally {
  for (const child of load) process.kill(-child.pid, 'SIGKILL');
}
