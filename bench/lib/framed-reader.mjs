/**
 * The read path proposed in issue 36, measured before it is built: tmux copies a pane's bytes
 * unescaped (`pipe-pane -O`) to a framer in the container (assets/pane-framer.pl: pane, byte offset,
 * length, bytes), which writes its frames to one FIFO; one `docker exec` streams the FIFO to
 * this process, which checks the frames (PaneFrameDecoder) and parses the bytes in an
 * `@xterm/headless` emulator, as the server would. Timed from the command's start (in the
 * container) until the emulator has parsed a line the pane printed after the command.
 * Also the CPU seconds per MB of the tmux server, of the framer, and of this process.
 */
import { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import path from 'node:path';
import { containerOf, engine } from './instance.mjs';
import { ROOT } from './paths.mjs';
import { rawExec } from './raw-exec.mjs';

const { PaneFrameDecoder, paneFramerPerl } = await import(path.join(ROOT, 'dist', 'tty', 'host', 'pane-frames.js'));
const { Terminal } = createRequire(import.meta.url)('@xterm/headless');

const END = 'AK_BENCH_END';

export async function tmuxFramedThroughExec(instanceName, command) {
  const socket = `bench-tmux-framed-${process.pid}`;
  const tmux = `tmux -L ${socket} -f /dev/null`;
  const t = (name) => `/tmp/${socket}.${name}`;
  const pane = `${tmux} wait-for go; date +%s%N > ${t('start')}; ${command}; echo ${END}; ${tmux} wait-for -S done; sleep 60`;
  const made = await rawExec(instanceName, ['sh', '-c', `rm -f ${t('fifo')}; mkfifo ${t('fifo')} && ${tmux} new-session -d -s bench -x 120 -y 40 "${pane}" && ${tmux} display -p '#{pane_id}'`]);
  const paneId = Number(made.head.trim().slice(1));
  if (made.exitCode !== 0 || !Number.isInteger(paneId)) throw new Error(`tmux framed: ${made.head} ${made.stderr}`);
  const { docker } = await engine();
  // Opened for reading and writing: the stream never ends between two framers.
  const exec = await (await containerOf(instanceName)).exec({ Cmd: ['sh', '-c', `echo $$ > ${t('reader')}; exec cat 0<>${t('fifo')}`], AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: true });
  const term = new Terminal({ cols: 120, rows: 40, scrollback: 10_000, allowProposedApi: true });
  const decoder = new PaneFrameDecoder();
  decoder.follow(paneId, 1);
  let tail = '';
  let bytes = 0;
  let settled;
  const done = new Promise((resolve, reject) => (settled = { resolve, reject }));
  decoder.on('broken', (reason) => settled.reject(new Error(`tmux framed: ${reason}`)));
  decoder.on('output', (_pane, _offset, data) => {
    bytes += data.length;
    term.write(data);
    tail = (tail + data.toString('latin1', Math.max(0, data.length - 32))).slice(-64);
    if (tail.includes(END)) term.write('', () => settled.resolve(Date.now()));
  });
  docker.modem.demuxStream(stream, new Writable({ write: (chunk, _e, cb) => (decoder.push(chunk), cb()) }), new Writable({ write: (_c, _e, cb) => cb() }));
  const cpuBefore = process.cpuUsage();
  const cpu = (pid) => `sed 's/.*) //' /proc/${pid}/stat | cut -d' ' -f12,13`;
  try {
    // tmux runs the pipe's command through strftime: %% is a %.
    const framer = `exec perl -e '${paneFramerPerl()}' ${paneId} 1 > ${t('fifo')}`.replaceAll('%', '%%');
    const started = await rawExec(instanceName, ['sh', '-c', `${tmux} pipe-pane -O -t bench "$1" && ${tmux} wait-for -S go`, 'sh', framer]);
    if (started.exitCode !== 0) throw new Error(`tmux framed: ${started.stderr}`);
    const gotAt = await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error('tmux framed: no end in 120 s')), 120_000).unref())]);
    const hostCpu = process.cpuUsage(cpuBefore);
    const facts = await rawExec(instanceName, ['sh', '-c', `${tmux} wait-for done; cat ${t('start')}; ${cpu(`$(${tmux} display -p '#{pid}')`)}; for p in $(pgrep -f '^perl -e'); do ${cpu('$p')}; done`]);
    const [start, tmuxUser, tmuxSystem, ...framerTicks] = facts.head.trim().split(/\s+/).map(Number);
    const mb = bytes / 1e6;
    return {
      elapsedMs: gotAt - start / 1e6,
      cpuPerMB: { host: (hostCpu.user + hostCpu.system) / 1e6 / mb, tmux: (tmuxUser + tmuxSystem) / 100 / mb, framer: framerTicks.reduce((a, b) => a + b, 0) / 100 / mb },
    };
  } finally {
    stream.destroy();
    term.dispose();
    const finish = `p=$(${tmux} display -p '#{pid}'); s=$(${tmux} display -p '#{socket_path}'); kill -9 $p $(cat ${t('reader')}) 2>/dev/null; rm -f "$s" ${t('*')}`;
    await rawExec(instanceName, ['sh', '-c', finish]).catch(() => {});
  }
}
