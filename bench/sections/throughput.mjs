/**
 * Throughput: `seq 1 1000000` and a 50 MB `cat` (of a file made inside the container)
 * through a terminal until wait returns, vs a raw `docker exec` pipe of the same output;
 * and whether wait's head, tail and elided line counts are exactly right.
 */
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { cpuSeconds, tmuxPids, totalCpu } from '../lib/cpu.mjs';
import { containerOf, engine } from '../lib/instance.mjs';
import { tmuxFramedThroughExec } from '../lib/framed-reader.mjs';
import { rawExec } from '../lib/raw-exec.mjs';
import { startServer, textOf } from '../lib/server.mjs';
import { median, summary } from '../lib/stats.mjs';

const BIG_FILE = '/tmp/agent-kernel-bench-50m.txt';
// 37.5 MB of random bytes in base64 lines of 100 characters: 50.5 MB, 500,000 lines, no wrapping at 120 columns.
const MAKE_BIG_FILE = `head -c 37500000 /dev/urandom | base64 -w 100 > ${BIG_FILE}`;

/** What the output must look like: its size, line count, first and last 9 lines (from the container itself). */
async function expected(instanceName, shell) {
  const facts = await rawExec(instanceName, ['sh', '-c', `${shell} | wc -lc; ${shell} | head -n 9; ${shell} | tail -n 9`]);
  const [counts, ...rest] = facts.head.trimEnd().split('\n');
  const [lines, bytes] = counts.trim().split(/\s+/).map(Number);
  return { lines, bytes, head: rest.slice(0, 9), tail: rest.slice(9, 18) };
}

/**
 * The same output into a tmux pane with no client attached (its own socket): the floor for
 * any design that keeps terminals in tmux. Also the CPU seconds its tmux server used.
 * With `controlClient`, a control-mode client (`tmux -C`, what the server reads terminals
 * through) is attached and throws the output away, inside the container: the ceiling for a
 * design that reads tmux's output through control mode (tmux escapes every byte for it).
 * With `pipePane`, tmux instead copies the pane's bytes as they are, unescaped, to a
 * `pipe-pane` command that throws them away: the ceiling for any reader of a tmux pane.
 * Timed in the container from the command's start until the pane printed its last line, or,
 * with the client, until the client got it (a command sent through the client after the
 * command ended is answered after every byte before it), or, with the pipe, until the pipe's
 * reader got a line the pane printed after the command.
 */
async function tmuxAlone(instanceName, command, { controlClient = false, pipePane = false } = {}) {
  const socket = `bench-tmux-alone-${process.pid}`;
  const tmux = `tmux -L ${socket} -f /dev/null`;
  const t = (name) => `/tmp/${socket}.${name}`;
  const now = (name) => `date +%s%N > ${t(name)}`;
  // utime and stime of the tmux server, read inside the container before it is killed.
  const cpu = `sed 's/.*) //' /proc/$(${tmux} display -p '#{pid}')/stat | cut -d' ' -f12,13`;
  // The pane's command starts once the client (if any) is attached: the pane waits for 'go'.
  const attach =
    `mkfifo ${t('in')}; (${tmux} -C attach -t bench < ${t('in')} | { grep -q -m1 '^AK_BENCH_SYNC$'; ${now('got')}; }) > /dev/null 2>&1 & ` +
    `exec 3> ${t('in')}; until ${tmux} list-clients | grep -q .; do sleep 0.01; done`;
  const waitGot = `i=0; until [ -s ${t('got')} ] || [ $i -gt 3000 ]; do sleep 0.01; i=$((i + 1)); done;`;
  const sync = `echo 'display-message -p AK_BENCH_SYNC' >&3; ${waitGot}`;
  // tmux waits for its control client to go before it exits: end both for sure.
  const finish = `p=$(${tmux} display -p '#{pid}'); c=$(${tmux} list-clients -F '#{client_pid}'); s=$(${tmux} display -p '#{socket_path}'); kill -9 $c $p 2>/dev/null; rm -f "$s" ${t('*')}`;
  // The pipe's reader notes the time it reads the line after the command (underscores: never in seq's or base64's output).
  // tmux runs the pipe's command through strftime: %% is a %.
  const pipe = `${tmux} pipe-pane -O -t bench '{ grep -q -m1 AK_BENCH_END; ${now('got').replaceAll('%', '%%')}; cat > /dev/null; }'`;
  const pane = `${tmux} wait-for go; ${now('start')}; ${command}; ${pipePane ? 'echo AK_BENCH_END; ' : ''}${now('end')}; ${tmux} wait-for -S done; sleep 60`;
  const script = `${tmux} new-session -d -s bench -x 120 -y 40 "${pane}"; ${controlClient ? `${attach};` : ''} ${pipePane ? `${pipe};` : ''} ${tmux} wait-for -S go; ${tmux} wait-for done; ${controlClient ? sync : ''} ${pipePane ? waitGot : ''} ${cpu}; cat ${t('start')} ${t(controlClient || pipePane ? 'got' : 'end')}; ${finish}`;
  const r = await rawExec(instanceName, ['sh', '-c', script]);
  const [utime, stime, start, end] = r.head.trim().split(/\s+/).map(Number);
  if (r.exitCode !== 0 || ![utime, stime, start, end].every(Number.isFinite)) throw new Error(`tmux alone: ${r.head} ${r.stderr}`);
  return { elapsedMs: (end - start) / 1e6, cpuSeconds: (utime + stime) / 100 };
}

/**
 * The same with the control client read as the server reads it: through `docker exec`, by
 * this process, which throws the output away. The ceiling for a server on the host that reads
 * a container's tmux through control mode. Timed from the command's start (in the container)
 * until the answer to a command sent after it ended reached this process (the container's
 * clock is the host's).
 */
async function tmuxControlThroughExec(instanceName, command) {
  const socket = `bench-tmux-exec-${process.pid}`;
  const tmux = `tmux -L ${socket} -f /dev/null`;
  const startFile = `/tmp/${socket}.start`;
  const pane = `${tmux} wait-for go; date +%s%N > ${startFile}; ${command}; ${tmux} wait-for -S done; sleep 60`;
  const made = await rawExec(instanceName, ['sh', '-c', `${tmux} new-session -d -s bench -x 120 -y 40 "${pane}"`]);
  if (made.exitCode !== 0) throw new Error(`tmux through exec: ${made.stderr}`);
  const { docker } = await engine();
  const exec = await (await containerOf(instanceName)).exec({
    Cmd: ['tmux', '-L', socket, '-f', '/dev/null', '-C', 'attach', '-t', 'bench'],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = await exec.start({ hijack: true, stdin: true });
  let gotAt;
  let tail = '';
  let synced;
  const sync = new Promise((resolve) => (synced = resolve));
  const sink = new Writable({
    write(chunk, _encoding, done) {
      if (gotAt === undefined) {
        tail = (tail + chunk.toString('latin1')).slice(-64);
        if (/\nAK_BENCH_SYNC\r?\n/.test(tail)) {
          gotAt = Date.now();
          synced();
        }
      }
      done();
    },
  });
  docker.modem.demuxStream(stream, sink, new Writable({ write: (_chunk, _encoding, done) => done() }));
  try {
    for (let i = 0; i < 300 && !(await rawExec(instanceName, ['sh', '-c', `${tmux} list-clients`])).head.trim(); i++) await delay(10);
    await rawExec(instanceName, ['sh', '-c', `${tmux} wait-for -S go; ${tmux} wait-for done`]);
    stream.write('display-message -p AK_BENCH_SYNC\n');
    await Promise.race([sync, delay(120_000).then(() => Promise.reject(new Error('tmux through exec: no answer in 120 s')))]);
    const start = Number((await rawExec(instanceName, ['cat', startFile])).head.trim());
    return { elapsedMs: gotAt - start / 1e6 };
  } finally {
    stream.destroy();
    const finish = `p=$(${tmux} display -p '#{pid}'); c=$(${tmux} list-clients -F '#{client_pid}'); s=$(${tmux} display -p '#{socket_path}'); kill -9 $c $p 2>/dev/null; rm -f "$s" ${startFile}`;
    await rawExec(instanceName, ['sh', '-c', finish]).catch(() => {});
  }
}

/** type the command, wait until it finished; return the time and what the agent was shown. */
async function throughTty(session, tty, command) {
  const began = performance.now();
  await session.ok('type', { tty, expect: 'bash', text: command });
  const diffs = [];
  for (;;) {
    const result = await session.ok('wait', { timeout: 50 });
    const change = result.structuredContent.changed.find((c) => c.tty === tty);
    if (change) diffs.push(change);
    if (result.structuredContent.reason === 'command-finished') break;
  }
  return { elapsedMs: performance.now() - began, diffs };
}

/**
 * The check: in all, every line of output and the next prompt (the command line the agent
 * typed is not echoed back); the first wait shows the first 9 lines; the last shows the last 9
 * (then the prompt, unless it is the one the agent saw last); the note between says exactly
 * how many lines were left out.
 */
function check(diffs, command, want) {
  const problems = [];
  const total = diffs.reduce((n, d) => n + d.totalLines, 0);
  const elided = diffs.reduce((n, d) => n + d.elidedLines, 0);
  const wantTotal = want.lines + 1;
  if (total !== wantTotal) problems.push(`totalLines ${total}, want ${wantTotal}`);
  const shown = diffs.reduce((n, d) => n + (d.totalLines - d.elidedLines), 0);
  if (elided !== total - shown || diffs.some((d) => d.elidedLines !== Math.max(0, d.totalLines - 20))) problems.push(`elidedLines ${elided} (per wait: ${diffs.map((d) => d.elidedLines).join(', ')})`);
  const first = diffs[0]?.diff.split('\n') ?? [];
  const last = diffs.at(-1)?.diff.split('\n') ?? [];
  if (first[0]?.endsWith(command)) problems.push(`the command line was echoed back: ${JSON.stringify(first[0])}`);
  if (first.slice(0, 9).join('\n') !== want.head.join('\n')) problems.push(`head ${JSON.stringify(first.slice(0, 9))}`);
  // The prompt after the output is shown only when it differs from the one the agent saw last.
  const body = /[#$] ?$/.test(last.at(-1) ?? '') ? last.slice(0, -1) : last;
  if (body.slice(-9).join('\n') !== want.tail.join('\n')) problems.push(`tail ${JSON.stringify(body.slice(-9))}`);
  for (const d of diffs) {
    if (d.elidedLines > 0 && !d.diff.includes(`… ${d.elidedLines} more lines left out (${d.totalLines} in all;`)) problems.push('elision note missing or wrong');
  }
  if (diffs.some((d) => d.cutChars > 0)) problems.push('result size cap cut characters');
  return { pass: problems.length === 0, problems, total, elided, waits: diffs.length };
}

export async function throughput({ instance, seqRuns, catRuns, rawRuns }) {
  const out = {};
  const make = await rawExec(instance.name, ['sh', '-c', MAKE_BIG_FILE]);
  if (make.exitCode !== 0) throw new Error(`making ${BIG_FILE} failed: ${make.stderr}`);
  const workloads = [
    { key: 'seq', command: 'seq 1 1000000', argv: ['seq', '1', '1000000'], runs: seqRuns },
    { key: 'cat50m', command: `cat ${BIG_FILE}`, argv: ['cat', BIG_FILE], runs: catRuns },
  ];
  const session = await startServer(instance.dataDir);
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    const { tty } = (await session.ok('open')).structuredContent;
    await session.ok('wait', { timeout: 10 });
    for (const w of workloads) {
      const want = await expected(instance.name, w.command);
      const raw = [];
      for (let i = 0; i < rawRuns; i++) {
        const r = await rawExec(instance.name, w.argv);
        if (r.bytes !== want.bytes) throw new Error(`raw ${w.command}: ${r.bytes} bytes, want ${want.bytes}`);
        raw.push(r.elapsedMs);
      }
      const alone = [];
      const aloneCpu = [];
      const withClient = [];
      const withPipe = [];
      const throughExec = [];
      const framed = [];
      for (let i = 0; i < Math.min(2, rawRuns); i++) {
        const r = await tmuxAlone(instance.name, w.command);
        alone.push(r.elapsedMs);
        aloneCpu.push(r.cpuSeconds);
        withClient.push((await tmuxAlone(instance.name, w.command, { controlClient: true }).catch(() => ({ elapsedMs: NaN }))).elapsedMs);
        withPipe.push((await tmuxAlone(instance.name, w.command, { pipePane: true }).catch(() => ({ elapsedMs: NaN }))).elapsedMs);
        throughExec.push((await tmuxControlThroughExec(instance.name, w.command).catch(() => ({ elapsedMs: NaN }))).elapsedMs);
        framed.push(await tmuxFramedThroughExec(instance.name, w.command).catch((error) => ({ elapsedMs: NaN, error: String(error) })));
      }
      const times = [];
      const checks = [];
      // CPU seconds of the server and of the terminals' tmux server (the same process for every run), from /proc.
      const tmux = await tmuxPids(instance.name);
      const cpu = { server: [], tmux: [] };
      for (let i = 0; i < w.runs; i++) {
        const before = [await cpuSeconds(session.pid), await totalCpu(tmux.server)];
        const run = await throughTty(session, tty, w.command);
        const after = [await cpuSeconds(session.pid), await totalCpu(tmux.server)];
        times.push(run.elapsedMs);
        cpu.server.push(after[0] - before[0]);
        cpu.tmux.push(after[1] - before[1]);
        checks.push(check(run.diffs, w.command, want));
      }
      const perMB = (seconds) => median(seconds) / (want.bytes / 1e6);
      const tty_ = summary(times);
      const raw_ = summary(raw);
      out[w.key] = {
        bytes: want.bytes,
        lines: want.lines,
        tty: tty_,
        raw: raw_,
        ttyMBps: want.bytes / 1e6 / (median(times) / 1000),
        rawMBps: want.bytes / 1e6 / (median(raw) / 1000),
        tmuxAlone: summary(alone),
        tmuxAloneMBps: want.bytes / 1e6 / (median(alone) / 1000),
        tmuxControl: summary(withClient),
        tmuxControlMBps: want.bytes / 1e6 / (median(withClient) / 1000),
        tmuxPipe: summary(withPipe),
        tmuxPipeMBps: want.bytes / 1e6 / (median(withPipe) / 1000),
        tmuxExec: summary(throughExec),
        tmuxExecMBps: want.bytes / 1e6 / (median(throughExec) / 1000),
        framed: summary(framed.map((f) => f.elapsedMs)),
        framedMBps: want.bytes / 1e6 / (median(framed.map((f) => f.elapsedMs)) / 1000),
        framedCpuPerMB: ['host', 'tmux', 'framer'].reduce((o, k) => ({ ...o, [k]: median(framed.map((f) => f.cpuPerMB?.[k] ?? NaN)) }), {}),
        framedErrors: framed.flatMap((f) => (f.error ? [f.error] : [])),
        cpuPerMB: { server: perMB(cpu.server), tmux: perMB(cpu.tmux), tmuxAlone: perMB(aloneCpu) },
        checks,
        pass: checks.every((c) => c.pass),
      };
    }
    await session.ok('close', { tty });
  } finally {
    await session.stop();
    await rawExec(instance.name, ['rm', '-f', BIG_FILE]).catch(() => {});
  }
  return out;
}

export { textOf };
