/**
 * Context cost: bytes returned to the agent over a fixed scripted session, vs what a
 * "full screen every time" server (capture-pane of the whole screen after each step)
 * and a "plain scrollback tail" server (the last 100 lines after each step) would return.
 */
import { rawExec } from '../lib/raw-exec.mjs';
import { startServer, textOf } from '../lib/server.mjs';

const C_PROGRAM = `cat > hello.c <<'EOF'
#include <stdio.h>
int main(void) {
  for (int i = 1; i <= 30; i++) printf("line %d: %d squared is %d\\n", i, i, i * i);
  return 0;
}
EOF`;
const PY_PROGRAM = `cat > hello.py <<'EOF'
for i in range(1, 31):
    print(f"line {i}: {i} squared is {i * i}")
EOF`;

/** The session: steps of [label, type arguments, wait timeout]. `hasGcc` picks C or Python. */
function script(tty, hasGcc) {
  const t = (expect, text, extra = {}) => ({ tty, expect, text, ...extra });
  return [
    ['write a program', t('bash', hasGcc ? C_PROGRAM : PY_PROGRAM), 10],
    ['build and run it', t('bash', hasGcc ? 'gcc -O2 -Wall -o hello hello.c && ./hello' : 'python3 -m py_compile hello.py && python3 hello.py'), 30],
    ['open vim', t('bash', 'vi notes.txt'), 10],
    ['insert text', t('vi', 'iThe agent wrote this line in vim.', { enter: false }), 10],
    ['leave insert mode', t('vi', 'Escape'), 10],
    ['save and quit', t('vi', ':wq'), 10],
    ['check the file', t('bash', 'cat notes.txt'), 10],
    ['start a python REPL', t('bash', 'python3'), 10],
    ['compute', t('python3', 'sum(i * i for i in range(100))'), 10],
    ['import and print', t('python3', 'import math; print(math.pi)'), 10],
    ['leave the REPL', t('python3', 'C-d'), 10],
    ['start a runaway loop', t('bash', `python3 -c 'import itertools, time${'\n'}for i in itertools.count(): print("tick", i, flush=True); time.sleep(0.05)'`), 2],
    ['interrupt it', t('python3', 'C-c'), 10],
    ['write a log in the background', t('bash', '(for i in $(seq 1 60); do echo "$(date +%T) GET /api/item/$i 200 $((i * 7)) ms"; sleep 0.05; done > app.log &)'), 10],
    ['follow the log', t('bash', 'tail -f app.log'), 4],
    ['stop following', t('tail', 'C-c'), 10],
  ];
}

/**
 * A loop that prints as fast as it can: can the agent interrupt it? type() is refused while
 * a terminal has unseen output, so each try is wait(0) then type(C-c). close() is the way out.
 */
async function interruptTightLoop(session, tries = 10) {
  const { tty } = (await session.ok('open')).structuredContent;
  await session.ok('wait', { timeout: 10 });
  await session.ok('type', { tty, expect: 'bash', text: 'while :; do echo tick; done' });
  let refused = 0;
  let interrupted = false;
  for (let i = 0; i < tries && !interrupted; i++) {
    await session.ok('wait', { timeout: i === 0 ? 1 : 0 });
    const typed = await session.call('type', { tty, expect: 'bash', text: 'C-c' });
    if (typed.isError) refused += 1;
    else interrupted = true;
  }
  await session.ok('close', { tty });
  return { tries: refused + (interrupted ? 1 : 0), refused, interrupted };
}

async function capture(instanceName, tty, args) {
  const r = await rawExec(instanceName, ['tmux', '-L', 'agent-kernel', '-f', '/dev/null', 'capture-pane', '-p', '-t', `kernel:${tty}`, ...args]);
  if (r.exitCode !== 0) throw new Error(`capture-pane failed: ${r.stderr}`);
  return r.head;
}

export async function contextCost({ instance }) {
  const hasGcc = (await rawExec(instance.name, ['sh', '-c', 'command -v gcc'])).exitCode === 0;
  const session = await startServer(instance.dataDir);
  const steps = [];
  let refusals = 0;
  let tightLoop;
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    const { tty } = (await session.ok('open')).structuredContent;
    await session.ok('wait', { timeout: 10 });
    for (const [label, args, timeout] of script(tty, hasGcc)) {
      let typed = await session.call('type', args);
      let typeBytes = Buffer.byteLength(textOf(typed));
      let jsonBytes = Buffer.byteLength(JSON.stringify(typed));
      // Output still flowing (the runaway loop): type is refused until wait shows it; look, then try again.
      for (let attempt = 0; typed.isError && /UNSEEN_OUTPUT/.test(textOf(typed)) && attempt < 20; attempt++) {
        refusals += 1;
        const look = await session.ok('wait', { timeout: 0 });
        typeBytes += Buffer.byteLength(textOf(look));
        jsonBytes += Buffer.byteLength(JSON.stringify(look));
        typed = await session.call('type', args);
        typeBytes += Buffer.byteLength(textOf(typed));
        jsonBytes += Buffer.byteLength(JSON.stringify(typed));
      }
      if (typed.isError) throw new Error(`${label}: type refused: ${textOf(typed)}`);
      const waited = await session.ok('wait', { timeout });
      const kernel = typeBytes + Buffer.byteLength(textOf(waited));
      if (process.env.AK_BENCH_SHOW) console.error(`--- ${label}\n${textOf(typed)}\n${textOf(waited)}`);
      const screen = await capture(instance.name, tty, []);
      const history = await capture(instance.name, tty, ['-S', '-', '-E', '-']);
      const lines = history.replace(/\n+$/, '').split('\n');
      const tail100 = `${lines.slice(-100).join('\n')}\n`;
      steps.push({
        label,
        reason: waited.structuredContent.reason,
        kernelBytes: kernel,
        kernelJsonBytes: jsonBytes + Buffer.byteLength(JSON.stringify(waited)),
        fullScreenBytes: Buffer.byteLength(screen),
        tail100Bytes: Buffer.byteLength(tail100),
      });
    }
    await session.ok('close', { tty });
    tightLoop = await interruptTightLoop(session);
  } finally {
    await session.stop();
  }
  const sum = (key) => steps.reduce((n, s) => n + s[key], 0);
  return {
    program: hasGcc ? 'C (gcc)' : 'Python (no gcc in the image)',
    steps,
    refusals,
    tightLoop,
    kernelBytes: sum('kernelBytes'),
    kernelJsonBytes: sum('kernelJsonBytes'),
    fullScreenBytes: sum('fullScreenBytes'),
    tail100Bytes: sum('tail100Bytes'),
  };
}
