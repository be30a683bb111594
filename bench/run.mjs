/**
 * agent-kernel benchmarks, end to end through MCP, side by side with their baselines, in
 * one run: `npm run bench` (builds, makes sure an engine runs, then runs this).
 * Prints a Markdown table and writes everything to bench/results/latest.json.
 *
 *   node bench/run.mjs [--quick] [--only=round-trip,input-waits,throughput,context,startup,faults,memory,scale,tty-layer,egress,boundary,kernel,snapshots]
 *
 * Absolute times drift on a shared machine; ratios to the baselines measured in the same
 * run hold. The load average is printed with the table.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInstance } from './lib/instance.mjs';
import { ROOT } from './lib/paths.mjs';
import { livePids, startServer } from './lib/server.mjs';
import { mb, ms, ratio } from './lib/stats.mjs';
import { contextCost } from './sections/context.mjs';
import { boundary } from './sections/boundary.mjs';
import { egress } from './sections/egress.mjs';
import { inputWaits } from './sections/input-waits.mjs';
import { kernelFaults, kernelLogin, kernelSoak } from './sections/kernel.mjs';
import { faults, memory, startUp } from './sections/lifecycle.mjs';
import { roundTrip } from './sections/round-trip.mjs';
import { scale } from './sections/scale.mjs';
import { snapshots } from './sections/snapshots.mjs';
import { throughput } from './sections/throughput.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const SECTIONS = ['cold-start', 'round-trip', 'input-waits', 'throughput', 'context', 'startup', 'faults', 'memory', 'scale', 'tty-layer', 'egress', 'boundary', 'kernel', 'snapshots'];
for (const name of only ?? []) if (!SECTIONS.includes(name)) throw new Error(`unknown section ${name}; sections: ${SECTIONS.join(', ')}`);
const wanted = (name) => !only || only.includes(name) || name === 'cold-start';
const N = quick
  ? { rt: 10, input: 3, settle: 3, seq: 1, cat: 1, raw: 2, startup: 3, faults: 20, adopt: 2, scale: 5, downloads: 2, requests: 20, boundary: 5, kernelLogin: 5, soakMinutes: 4, kernelKills: 10, snapshots: 2, snapContainerMb: 50, snapDataMb: 20 }
  : { rt: 30, input: 10, settle: 5, seq: 3, cat: 2, raw: 3, startup: 5, faults: 100, adopt: 3, scale: 10, downloads: 5, requests: 50, boundary: 15, kernelLogin: 10, soakMinutes: 20, kernelKills: 50, snapshots: 3, snapContainerMb: 500, snapDataMb: 200 };

const created = [];
let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    for (const pid of livePids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const inst of created) await inst.cleanup().catch((error) => console.error(`cleanup of ${inst.name} failed: ${error.message}`));
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up the bench's containers and images`);
    void cleanup().finally(() => process.exit(130));
  });
}

const log = (line) => process.stderr.write(`bench: ${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');
const started = new Date();
const loadAtStart = load();
const results = { date: started.toISOString(), command: 'npm run bench', quick, runs: N, machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAtStart } };
try {
  results.machine.engine = execFileSync('docker', ['version', '--format', '{{.Server.Version}}'], { encoding: 'utf8' }).trim();
} catch {
  results.machine.engine = 'unknown';
}

async function section(name, fn) {
  if (!wanted(name)) return;
  const began = Date.now();
  log(`${name}... (load ${load()})`);
  try {
    results[name] = await fn();
  } catch (error) {
    results[name] = { error: error.stack ?? String(error) };
    log(`${name} FAILED: ${error.message}`);
  }
  log(`${name} done in ${((Date.now() - began) / 1000).toFixed(0)} s`);
}

function ttyLayer() {
  // The terminal layer alone (TtyManager in-process, no MCP): bench/tty.mjs, the docker backend.
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(ROOT, 'bench', 'tty.mjs'), 'docker'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => child.kill('SIGINT'), 300_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, lines: output.split('\n').filter((l) => l.trim()) });
    });
  });
}

try {
  const main = await createInstance({ name: `bench-${process.pid}` });
  created.push(main);
  log(`instance ${main.name} in ${main.dataDir}; building its image (from the build cache)`);
  await main.prebuild();
  // The first login starts the container (the raw docker exec baselines need it): timed, as the cold start.
  await section('cold-start', async () => {
    const session = await startServer(main.dataDir);
    try {
      await session.ok('login');
      return { ms: performance.now() - session.spawnedAt };
    } finally {
      await session.stop();
    }
  });
  // The seed's way of knowing a program is done (silence for tty.settle_ms), as a baseline.
  const settle = await createInstance({ name: `bench-${process.pid}-settle`, config: { tty: { detect_input: false } } });
  created.push(settle);
  await settle.prebuild();
  await section('round-trip', () => roundTrip({ instance: main, settleInstance: settle, runs: N.rt, settleRuns: N.settle }));
  await section('input-waits', () => inputWaits({ instance: main, settleInstance: settle, runs: N.input }));
  await section('throughput', () => throughput({ instance: main, seqRuns: N.seq, catRuns: N.cat, rawRuns: N.raw }));
  await section('context', () => contextCost({ instance: main }));
  await section('startup', () => startUp({ instance: main, runs: N.startup }));
  await section('faults', async () => {
    // A history limit the run's ~150,000 lines pass many times, so tmux trims while servers die.
    const inst = await createInstance({ name: `bench-${process.pid}-faults`, config: { tty: { history_limit: 20_000 } } });
    created.push(inst);
    await inst.prebuild();
    return faults({ instance: inst, kills: Number(process.env.FAULT_KILLS ?? N.faults) });
  });
  await section('memory', () => memory({ instance: main, adoptRuns: N.adopt }));
  await section('scale', async () => {
    const instances = [];
    for (let i = 1; i <= 8; i++) {
      const inst = await createInstance({ name: `bench-${process.pid}-s${i}` });
      created.push(inst);
      instances.push(inst);
      await inst.prebuild();
    }
    return scale({ instances, runs: N.scale });
  });
  await section('tty-layer', ttyLayer);
  await section('kernel', async () => {
    const fresh = async (suffix, config = {}) => {
      const inst = await createInstance({ name: `bench-${process.pid}-${suffix}`, config });
      created.push(inst);
      await inst.prebuild();
      return inst;
    };
    const login = await kernelLogin({ instance: await fresh('kl'), runs: N.kernelLogin });
    const soak = await kernelSoak({ instance: await fresh('ks'), minutes: Number(process.env.KERNEL_SOAK_MINUTES ?? N.soakMinutes) });
    const faults = await kernelFaults({ instance: await fresh('kf', { tty: { history_limit: 20_000 } }), kills: Number(process.env.KERNEL_KILLS ?? N.kernelKills) });
    return { login, soak, faults };
  });
  await section('egress', () => egress({ created, downloads: N.downloads, requests: N.requests }));
  await section('boundary', () => boundary({ created, runs: N.boundary, seqRuns: N.seq, startRuns: N.startup }));
  await section('snapshots', () => snapshots({ created, runs: N.snapshots, containerMb: N.snapContainerMb, dataMb: N.snapDataMb }));
} finally {
  log('cleaning up containers and images of this run');
  await cleanup();
}
results.machine.loadAtEnd = load();
results.durationS = Math.round((Date.now() - started.getTime()) / 1000);

// ------------------------------------------------------------------ the table
const rows = [];
const row = (figure, kernel, baseline, r) => rows.push(`| ${figure} | ${kernel} | ${baseline} | ${r} |`);
const fail = (name) => results[name]?.error && row(`${name}: FAILED`, results[name].error.split('\n')[0], '', '');
const mp = (s) => `${ms(s.median)} / ${ms(s.p95)}`;

const rt = results['round-trip'];
if (rt && !rt.error) {
  for (const t of ['stdio', 'http']) {
    row(`type+wait \`echo hi\`, ${t} (median / p95)`, mp(rt[`${t}.echo`]), `silence settle 1.5 s: ${mp(rt[`${t}.settle.echo`])}`, ratio(rt[`${t}.echo`].median, rt[`${t}.settle.echo`].median));
    row(`type+wait \`echo hi\`, ${t}, vs the floor`, ms(rt[`${t}.echo`].median), `raw docker exec: ${mp(rt['raw.echo'])}`, ratio(rt[`${t}.echo`].median, rt['raw.echo'].median));
    row(`type+wait \`true\`, ${t} (aim: a few tens of ms)`, mp(rt[`${t}.true`]), `silence settle: ${ms(rt[`${t}.settle.echo`].median)}`, ratio(rt[`${t}.true`].median, rt[`${t}.settle.echo`].median));
  }
} else fail('round-trip');

const iw = results['input-waits'];
if (iw && !iw.error) {
  for (const [key, label] of [
    ['replStart', 'a python REPL starts (`python3 -q` to `>>> `)'],
    ['replExpression', 'an expression in the REPL'],
    ['viOpen', 'vi opens a file'],
    ['inputPrompt', 'a line prompt, `input("name? ")`'],
    ['readPrompt', "bash `read -p 'name? '`"],
    ['getpassPrompt', 'a password prompt read from /dev/tty, `getpass.getpass()`'],
    ['devTtyRead', "bash `read -p 'tty? ' < /dev/tty`"],
  ]) {
    if (!iw[key]) continue;
    row(`type+wait until ${label} waits for input (median / p95)`, mp(iw[key]), `silence settle: ${mp(iw.settleEcho)}`, ratio(iw[key].median, iw.settleEcho.median));
  }
  if (iw.pythonStart) row("Python's own start-up as a REPL (`import readline, rlcompleter`, timed in the container; part of REPL start)", mp(iw.pythonStart), '', '');
} else fail('input-waits');

const tp = results.throughput;
if (tp && !tp.error) {
  for (const [key, label] of [['seq', '`seq 1 1000000`'], ['cat50m', '50 MB `cat`']]) {
    const w = tp[key];
    row(
      `${label} through a TTY until wait returns (${mb(w.bytes)}; aim: >= 0.5x raw)`,
      `${ms(w.tty.median)} (${w.ttyMBps.toFixed(1)} MB/s)`,
      `raw docker exec pipe: ${ms(w.raw.median)} (${w.rawMBps.toFixed(1)} MB/s)`,
      `${(w.ttyMBps / w.rawMBps).toFixed(2)}x rate`,
    );
    row(`${label} through a TTY, vs tmux alone (a pane, no client: the floor for terminals kept in tmux)`, `${w.ttyMBps.toFixed(1)} MB/s`, `tmux alone: ${ms(w.tmuxAlone.median)} (${w.tmuxAloneMBps.toFixed(1)} MB/s)`, `${(w.ttyMBps / w.tmuxAloneMBps).toFixed(2)}x rate`);
    row(
      `${label} through a TTY, vs tmux with a control client that discards it (the ceiling when reading tmux through control mode)`,
      `${w.ttyMBps.toFixed(1)} MB/s`,
      `tmux + \`tmux -C\` to /dev/null: ${ms(w.tmuxControl.median)} (${w.tmuxControlMBps.toFixed(1)} MB/s)`,
      `${(w.ttyMBps / w.tmuxControlMBps).toFixed(2)}x rate`,
    );
    row(
      `${label} through a TTY, vs tmux copying the pane's bytes unescaped to a \`pipe-pane\` command that discards them (the ceiling for any reader of a tmux pane)`,
      `${w.ttyMBps.toFixed(1)} MB/s`,
      `tmux + \`pipe-pane\` to /dev/null: ${ms(w.tmuxPipe.median)} (${w.tmuxPipeMBps.toFixed(1)} MB/s, ${(w.tmuxPipeMBps / w.tmuxAloneMBps).toFixed(2)}x of tmux alone)`,
      `${(w.ttyMBps / w.tmuxPipeMBps).toFixed(2)}x rate`,
    );
    row(
      `${label} through a TTY, vs tmux with a control client read through docker exec and discarded on the host (the ceiling for a server on the host)`,
      `${w.ttyMBps.toFixed(1)} MB/s`,
      `tmux + \`tmux -C\` through docker exec: ${ms(w.tmuxExec.median)} (${w.tmuxExecMBps.toFixed(1)} MB/s)`,
      `${(w.ttyMBps / w.tmuxExecMBps).toFixed(2)}x rate`,
    );
    if (w.framed) {
      const f = w.framedCpuPerMB;
      row(
        `${label} through the proposed read path (issue 36: \`pipe-pane -O\` into a framer in the container, one FIFO, one docker exec, frames checked and parsed by an emulator on the host; no server), vs tmux alone`,
        `${ms(w.framed.median)} (${w.framedMBps.toFixed(1)} MB/s); CPU per MB: host ${f.host.toFixed(3)} s, tmux ${f.tmux.toFixed(3)} s, framer ${f.framer.toFixed(3)} s`,
        `tmux alone: ${w.tmuxAloneMBps.toFixed(1)} MB/s, ${w.cpuPerMB.tmuxAlone.toFixed(3)} s/MB; the server today: ${w.ttyMBps.toFixed(1)} MB/s`,
        `${(w.framedMBps / w.tmuxAloneMBps).toFixed(2)}x rate${w.framedErrors.length ? ` (errors: ${w.framedErrors.join('; ')})` : ''}`,
      );
    }
    const c = w.cpuPerMB;
    row(
      `${label}: CPU seconds per MB of output, server vs tmux (aim: server below tmux)`,
      `server: ${c.server.toFixed(3)} s/MB`,
      `tmux server with our control client: ${c.tmux.toFixed(3)} s/MB (tmux alone: ${c.tmuxAlone.toFixed(3)} s/MB)`,
      `${(c.server / c.tmux).toFixed(2)}x`,
    );
    row(`${label}: head, tail and elided counts exact`, w.pass ? `PASS (${w.checks.length} runs, ${w.checks[0].total} lines, ${w.checks[0].elided} elided)` : `FAIL: ${w.checks.flatMap((c) => c.problems).join('; ')}`, '', '');
  }
} else fail('throughput');

const cx = results.context;
if (cx && !cx.error) {
  const label = `context: bytes to the agent over a ${cx.steps.length}-step session (${cx.program}, vim, python REPL, runaway loop, tail -f)`;
  row(label, `${cx.kernelBytes} B`, `full screen every time: ${cx.fullScreenBytes} B`, ratio(cx.kernelBytes, cx.fullScreenBytes));
  row(`context: same session`, `${cx.kernelBytes} B`, `last 100 lines every time: ${cx.tail100Bytes} B`, ratio(cx.kernelBytes, cx.tail100Bytes));
  const tl = cx.tightLoop;
  if (tl) row('interrupt a tight `while :; do echo tick; done` (wait(0) then type C-c, up to 10 tries)', tl.interrupted ? `PASS: got through after ${tl.refused} refusal(s)` : `FAIL: refused for unseen output ${tl.refused} of ${tl.tries} times (close() is the only way out)`, '', '');
} else fail('context');

const mem = results.memory;
if (mem && !mem.error) {
  row('server RSS, logged in, no TTY (memory only it holds)', `${mb(mem.rss[0])} (${mb(mem.privateMemory)})`, '', '');
  for (const n of [1, 5, 20]) row(`server RSS, ${n} TTY${n > 1 ? 's' : ''} x 10k lines of scrollback${n === 20 ? ' (aim: < 200 MB)' : ''}`, mb(mem.rss[n]), `no TTY: ${mb(mem.rss[0])}`, ratio(mem.rss[n], mem.rss[0]));
  row('type+wait `echo hi` with 20 TTYs open', mp(mem.echoWith20), rt && !rt.error ? `1 TTY: ${ms(rt['stdio.echo'].median)}` : '', rt && !rt.error ? ratio(mem.echoWith20.median, rt['stdio.echo'].median) : '');
} else fail('memory');

const sc = results.scale;
if (sc && !sc.error) {
  const each = (n) => `${mb(sc[n].rssPerInstance)} (${mb(sc[n].privatePerInstance)} its own)`;
  for (const n of [1, 4, 8]) {
    row(
      `${n} instance${n > 1 ? 's' : ''} on one host, all clients at once: type+wait \`echo hi\`; server RSS per instance (memory only it holds)`,
      `${mp(sc[n].echo)}; ${each(n)}`,
      n === 1 ? '' : `1 instance: ${ms(sc[1].echo.median)}; ${each(1)}`,
      n === 1 ? '' : `${ratio(sc[n].echo.median, sc[1].echo.median)} latency, ${ratio(sc[n].rssPerInstance, sc[1].rssPerInstance)} RSS per instance`,
    );
  }
} else fail('scale');

const su = results.startup;
if (su && !su.error) {
  row('start-up: spawn serve to login answered (container running, no TTY)', mp(su), results['cold-start']?.ms ? `container not running: ${ms(results['cold-start'].ms)}` : '', results['cold-start']?.ms ? ratio(su.median, results['cold-start'].ms) : '');
  if (mem && !mem.error) row(`start-up with 20 live TTYs to re-adopt (aim: < 1 s)`, `${mp(mem.startWith20)} (${mem.adopted} adopted)`, `no TTY: ${ms(su.median)}`, ratio(mem.startWith20.median, su.median));
} else fail('startup');

const fl = results.faults;
if (fl && !fl.error) {
  row('faults: SIGKILL at a random moment, restart to login answered', mp(fl.recovery), su && !su.error ? `clean start-up: ${ms(su.median)}` : '', su && !su.error ? ratio(fl.recovery.median, su.median) : '');
  row(
    `faults: ${fl.kills} SIGKILLs (${Object.entries(fl.moments).map(([m, n]) => `${n} ${m}`).join(', ')}) while a terminal prints ~1,000 lines/s: lines printed / lost / repeated unlabelled / repeated under the "possibly repeated" label / gone past tty.history_limit (20,000) while a server was down, announced with their count`,
    `${fl.pass ? 'PASS' : 'FAIL'}: ${fl.printed} / ${fl.lost} / ${fl.unlabelledRepeats} / ${fl.labelledRepeats} / ${fl.announcedGone}${fl.wrongGoneCounts ? ` (${fl.wrongGoneCounts} counts wrong)` : ''}`,
    '',
    `seed ${fl.seed}, ${fl.seconds.toFixed(0)} s`,
  );
} else fail('faults');

const kn = results.kernel;
if (kn && !kn.error) {
  const { login, soak, faults: kf } = kn;
  const cpu = (s) => `CPU ${ms(s.cpu.median)}`;
  row(
    `login at the start of a tick with the kernel running (serve bridges to it; ${login.ttys} live TTYs; aim: within a do-nothing server's + 25 ms): spawn to login answered, and the CPU the process used until then`,
    `${mp(login.kernel)}; ${cpu(login.kernel)}`,
    `a fresh server re-adopting them: ${mp(login.fresh)}; ${cpu(login.fresh)}. A do-nothing Node MCP server: ${mp(login.floor)}; ${cpu(login.floor)}. node -e 0: ${mp(login.node)}; ${cpu(login.node)}`,
    `${(login.fresh.median / login.kernel.median).toFixed(1)}x faster than fresh; +${ms(login.kernel.median - login.floor.median)} (CPU +${ms(login.kernel.cpu.median - login.floor.cpu.median)}) over the do-nothing server`,
  );
  row(
    `kernel RSS under ${soak.minutes} min of continuous output nobody waits for (~${soak.rate} lines/s; aim: flat within 10% once warm, from half-way to the end); disk of the instance's files`,
    `${mb(soak.after.rss)} after ${soak.minutes} min; ${mb(soak.after.disk)}`,
    `after ${(soak.warmSeconds / 60).toFixed(0)} min: ${mb(soak.before.rss)}; ${mb(soak.before.disk)}${soak.series?.[1] ? ` (after 1 min: ${mb(soak.series[1].rss)})` : ''}`,
    `${soak.ratio.toFixed(2)}x RSS`,
  );
  row('kernel faults: SIGKILL of the kernel at a random moment, supervised restart to login answered through the same bridge', mp(kf.recovery), '', '');
  row(
    `kernel faults: ${kf.kills} SIGKILLs of the kernel (${Object.entries(kf.moments).map(([m, n]) => `${n} ${m}`).join(', ')}) under watch's supervisor while a terminal prints ~1,000 lines/s: lines printed / lost / repeated unlabelled / repeated under the label / announced gone`,
    `${kf.pass ? 'PASS' : 'FAIL'}: ${kf.printed} / ${kf.lost} / ${kf.unlabelledRepeats} / ${kf.labelledRepeats} / ${kf.announcedGone}`,
    '',
    `seed ${kf.seed}, ${kf.restarts} restarts, ${kf.seconds.toFixed(0)} s`,
  );
} else fail('kernel');

const eg = results.egress;
if (eg && !eg.error) {
  const rate = (s) => `${s.median.toFixed(0)} MB/s (min ${s.min.toFixed(0)})`;
  row(`egress: ${mb(eg.bytes)} HTTP download inside the container, allowlist (through the proxy)`, rate(eg.allowlist.mbps), `open (direct): ${rate(eg.open.mbps)}`, `${(eg.allowlist.mbps.median / eg.open.mbps.median).toFixed(2)}x rate`);
  row('egress: small HTTP request on a new connection (connect + answer), allowlist', mp(eg.allowlist.requestMs), `open: ${mp(eg.open.requestMs)}`, ratio(eg.allowlist.requestMs.median, eg.open.requestMs.median));
} else fail('egress');

const bd = results.boundary;
if (bd && !bd.error) {
  const without = bd.engine === 'userns-remap' ? 'without (container.boundary "none": container root is host root)' : `the same (this engine has no user namespace: ${bd.engine})`;
  for (const [key, label] of [
    ['echo', 'type+wait `echo hi`, stdio'],
    ['inputPrompt', 'type+wait until `input("name? ")` waits for input'],
    ['replStart', 'type+wait until a python REPL starts waits for input'],
    ['seq', 'type+wait `seq 1 1000000` until it finished'],
    ['startUp', 'start-up: spawn serve to login answered (container running)'],
    ['containerUp', 'container up from nothing (create, start, egress proxy and link; image built)'],
  ]) {
    row(`second boundary, ${bd.engine} (median / p95): ${label}`, mp(bd.with[key]), `${without}: ${mp(bd.without[key])}`, ratio(bd.with[key].median, bd.without[key].median));
  }
} else fail('boundary');

const sn = results.snapshots;
if (sn && !sn.error) {
  const what = `${sn.containerMb} MB installed in the container, ${sn.dataMb} MB data directory`;
  row(`snapshot: the first (${what}; aim ≤ 1.2x)`, ms(sn.first.median), `docker commit + tar of the data directory: ${ms(sn.firstBaseline.median)}`, ratio(sn.first.median, sn.firstBaseline.median));
  row(`snapshot: a second, nothing changed (median / p95; aim ≤ 1 s, ≤ 1 MB new: ${mb(Math.max(...sn.secondNewBytes.runs))} new, ${sn.secondUnread ?? 0} files known by their stamps, not read)`, mp(sn.second), `docker commit + tar again: ${mp(sn.secondBaseline)}`, ratio(sn.second.median, sn.secondBaseline.median));
  row('snapshot: restore (container made anew, changes put back, every file checked)', mp(sn.restore), `container down + up, nothing put back: ${mp(sn.restoreBaseline)}`, ratio(sn.restore.median, sn.restoreBaseline.median));
  for (const [stage, s] of Object.entries(sn.restoreStages ?? {})) row(`snapshot: restore, of which \`${stage}\` (median)`, ms(s.median), '', '');
} else fail('snapshots');

const header = [
  `agent-kernel bench, ${results.date} (${results.durationS} s), command: ${results.command}${quick ? ' -- --quick' : ''}`,
  `machine: ${results.machine.cpus} CPUs (${results.machine.model}), Node ${results.machine.node}, docker ${results.machine.engine}; load average at start ${loadAtStart}, at end ${results.machine.loadAtEnd}`,
  '',
  '| Figure | agent-kernel | Baseline (same run) | Ratio |',
  '|---|---|---|---|',
];
const table = [...header, ...rows].join('\n');
console.log(`\n${table}`);
const tl = results['tty-layer'];
if (tl) console.log(`\nTerminal layer alone (bench/tty.mjs, TtyManager in-process, no MCP; exit ${tl.exitCode}):\n${tl.lines.map((l) => `  ${l}`).join('\n')}`);
if (cx && !cx.error) {
  console.log('\nContext cost per step (bytes: agent-kernel type+wait text / full screen / last 100 lines):');
  for (const s of cx.steps) console.log(`  ${s.label.padEnd(32)} ${String(s.kernelBytes).padStart(6)} ${String(s.fullScreenBytes).padStart(6)} ${String(s.tail100Bytes).padStart(6)}  (${s.reason})`);
  console.log(`  type refused for unseen output while the loop ran: ${cx.refusals} time(s); JSON-RPC results in all (text + structuredContent): ${cx.kernelJsonBytes} B`);
}
results.table = table;
const out = path.join(ROOT, 'bench', 'results', 'latest.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nAll figures: ${path.relative(ROOT, out)}`);
const failed = SECTIONS.filter((s) => results[s]?.error);
if (failed.length > 0) {
  console.error(`sections that failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
