/**
 * Start-up (spawn of `agent-kernel serve` to login answered, container already running),
 * faults (SIGKILLs at random moments, restart to login answered, nothing lost), memory (server RSS
 * with 1, 5 and 20 TTYs of 10k lines each) and re-adoption of those 20 TTYs.
 */
import { startServer, waitUntil } from '../lib/server.mjs';
import { checkNothingLost } from '../lib/nothing-lost.mjs';
import { seededRandom } from '../lib/seeded-random.mjs';
import { median, sleep, summary } from '../lib/stats.mjs';

export async function startUp({ instance, runs }) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const session = await startServer(instance.dataDir);
    try {
      await session.ok('login');
      times.push(performance.now() - session.spawnedAt);
    } finally {
      await session.stop();
    }
  }
  return summary(times);
}

/**
 * The printer of the fault run: `L-<n>` at about `rate` lines a second until C-c, then `fault-end <last>`.
 * C-c only sets a flag (a KeyboardInterrupt could land between counting a line and writing it, or
 * in the middle of a write), so `fault-end` names exactly the last line written. Its terminal gets
 * NOFLSH and -ECHOCTL while it prints: by default a terminal that receives C-c discards what the
 * program wrote and tmux had not read yet (POSIX: INTR flushes the output queue), and echoes `^C`
 * into the middle of the output; either made lines the program wrote but no terminal ever showed
 * count as lost (3 runs of 30 lost the last 10 lines to a C-c with no server killed at all).
 */
export function printer(rate) {
  const program = [
    'import signal, sys, termios, time',
    'saved = termios.tcgetattr(0)',
    'quiet = list(saved)',
    'quiet[3] = (quiet[3] | termios.NOFLSH) & ~termios.ECHOCTL',
    'termios.tcsetattr(0, termios.TCSANOW, quiet)',
    'stop = False',
    'def on_interrupt(*_):',
    '    global stop',
    '    stop = True',
    'signal.signal(signal.SIGINT, on_interrupt)',
    'n = 0',
    't0 = time.monotonic()',
    'while not stop:',
    '    for _ in range(10):',
    '        n += 1',
    "        sys.stdout.write(f'L-{n}\\n')",
    '    sys.stdout.flush()',
    `    time.sleep(max(0, t0 + n / ${rate} - time.monotonic()))`,
    "print(f'fault-end {n}', flush=True)",
    'termios.tcsetattr(0, termios.TCSADRAIN, saved)',
  ].join('\n');
  return `python3 -c "$(printf '%s' '${Buffer.from(program).toString('base64')}' | base64 -d)"`;
}

/**
 * What the client of a fault run saw of its printer terminal: `start` logs in, opens it and starts
 * the printer (~`rate` numbered lines a second); `record` keeps each wait's report of it; `end` sends
 * C-c, waits until the printer says `fault-end <last>`, closes it and gives the verdict: `printed` is
 * the last line written, `unreported` how many after the last one reported never reached the client.
 */
export class PrinterRun {
  tty = undefined;
  reports = [];

  record = (result) => {
    const report = result?.isError ? undefined : result?.structuredContent?.changed?.find((c) => c.tty === this.tty);
    if (report) this.reports.push({ text: report.diff });
  };

  async start(session, rate) {
    await session.ok('login');
    ({ tty: this.tty } = (await session.ok('open')).structuredContent);
    await session.ok('wait', { timeout: 10 });
    await session.ok('type', { tty: this.tty, expect: 'bash', text: printer(rate) });
  }

  async end(session) {
    const { tty } = this;
    await session.ok('type', { tty, expect: 'python3', text: 'C-c' });
    let end;
    for (let i = 0; i < 30 && end === undefined; i++) {
      const result = await session.ok('wait', { timeout: 10 });
      this.record(result);
      end = /fault-end (\d+)/.exec(result.structuredContent.changed.find((c) => c.tty === tty)?.diff ?? '')?.[1];
    }
    await session.ok('close', { tty });
    const verdict = checkNothingLost(this.reports);
    const printed = Number(end ?? NaN);
    const unreported = Number.isFinite(printed) ? printed - verdict.last : NaN;
    return { verdict, printed, unreported };
  }
}

const MOMENTS = ['during output', 'during a wait', 'between reply and save', 'during adoption'];

/**
 * The server SIGKILLed `kills` times at random moments (during output, during a wait,
 * between a reply and the save that follows it, during adoption) while one terminal prints
 * numbered lines at ~1,000 a second, through the SDK's Client over stdio. Every line must
 * reach the client; a line may come again only under a "possibly repeated" label.
 */
export async function faults({ instance, kills = 100, rate = 1000, seed = Number(process.env.FAULT_SEED ?? Date.now() % 100_000) }) {
  const random = seededRandom(seed);
  const run = new PrinterRun();
  const { record } = run;
  const recoveries = [];
  const moments = Object.fromEntries(MOMENTS.map((m) => [m, 0]));
  let session = await startServer(instance.dataDir);
  const began = performance.now();
  try {
    await run.start(session, rate);
    for (let k = 0; k < kills; k++) {
      const moment = MOMENTS[Math.floor(random() * MOMENTS.length)];
      moments[moment] += 1;
      if (moment === 'during adoption') {
        // Killed somewhere between spawn and login answered (adoption runs in there).
        const login = session.call('login').catch(() => undefined);
        await sleep(random() * 1200);
        await session.kill();
        await login;
      } else {
        await session.ok('login');
        // The agent looks after every login, so what it has seen keeps up with the printing.
        record(await session.call('wait', { timeout: 0 }));
        if (moment === 'during output') {
          await sleep(random() * 300);
        } else if (moment === 'during a wait') {
          const pending = session.call('wait', { timeout: random() * 0.5 }).then(record, () => undefined);
          await sleep(random() * 400);
          // A client reads what is in the pipe before it sees the server gone: let the call settle first.
          process.kill(session.pid, 'SIGKILL');
          await pending;
          await session.kill();
        } else {
          // The reply is in the pipe; the save that makes it seen for good runs right after.
          record(await session.call('wait', { timeout: random() * 0.3 }));
        }
        if (moment !== 'during a wait') await session.kill();
      }
      const killedAt = performance.now();
      session = await startServer(instance.dataDir);
      if (moment !== 'during adoption') {
        await session.ok('login');
        recoveries.push(performance.now() - killedAt);
      }
    }
    await session.ok('login');
    const { verdict, printed, unreported } = await run.end(session);
    return {
      seed,
      kills,
      moments,
      seconds: (performance.now() - began) / 1000,
      printed,
      lost: verdict.lost.length + Math.max(0, unreported),
      announcedGone: verdict.announcedGone,
      wrongGoneCounts: verdict.wrongGoneCounts,
      lostLines: verdict.lost.slice(0, 50),
      unlabelledRepeats: verdict.unlabelledRepeats.length,
      unlabelledRepeatLines: verdict.unlabelledRepeats.slice(0, 50),
      labelledRepeats: verdict.labelledRepeats,
      inconsistentElisions: verdict.inconsistentElisions,
      recovery: summary(recoveries),
      ...(verdict.lost.length + verdict.unlabelledRepeats.length + verdict.wrongGoneCounts + verdict.inconsistentElisions > 0 || unreported !== 0 ? { reports: run.reports } : {}),
      pass: Number.isFinite(printed) && unreported === 0 && verdict.lost.length === 0 && verdict.unlabelledRepeats.length === 0 && verdict.inconsistentElisions === 0 && verdict.wrongGoneCounts === 0,
    };
  } finally {
    await session.stop();
  }
}

/** RSS of a process sampled a few times over a second (GC makes single samples noisy): the median. */
async function settledRss(session) {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    samples.push(await session.rss());
    await sleep(250);
  }
  return median(samples);
}

export async function memory({ instance, steps = [1, 5, 20], scrollbackLines = 10_000, adoptRuns }) {
  const session = await startServer(instance.dataDir);
  const rss = {};
  let privateMemory;
  let echo;
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    rss[0] = await settledRss(session);
    privateMemory = await session.privateMemory();
    let open = 0;
    for (const target of steps) {
      while (open < target) {
        const { tty } = (await session.ok('open')).structuredContent;
        await session.ok('wait', { timeout: 10 });
        await session.ok('type', { tty, expect: 'bash', text: `seq 1 ${scrollbackLines} | sed 's/^/terminal ${tty} scrollback line /'` });
        await waitUntil(session, { timeout: 50 });
        open += 1;
      }
      rss[target] = await settledRss(session);
    }
    // type+wait latency with all 20 terminals open.
    const times = [];
    for (let i = 0; i < 10; i++) {
      const began = performance.now();
      await session.ok('type', { tty: 0, expect: 'bash', text: 'echo hi' });
      await session.ok('wait', { timeout: 10 });
      times.push(performance.now() - began);
    }
    echo = summary(times);
  } finally {
    await session.stop();
  }
  const adopt = [];
  const adoptRss = [];
  let adopted = 0;
  for (let i = 0; i < adoptRuns; i++) {
    const s = await startServer(instance.dataDir);
    try {
      const login = await s.ok('login');
      adopt.push(performance.now() - s.spawnedAt);
      adopted = login.structuredContent.adopted.length;
      adoptRss.push(await s.rss());
    } finally {
      await s.stop();
    }
  }
  return { rss, privateMemory, echoWith20: echo, startWith20: summary(adopt), adopted, rssAfterAdopt: median(adoptRss) };
}
