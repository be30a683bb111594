/**
 * Start-up (spawn of `agent-kernel serve` to login answered, container already running),
 * faults (SIGKILL mid-output, restart to login answered, nothing lost), memory (server RSS
 * with 1, 5 and 20 TTYs of 10k lines each) and re-adoption of those 20 TTYs.
 */
import { startServer, textOf, waitUntil } from '../lib/server.mjs';
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

const faultLines = (results) => results.flatMap((r) => [...textOf(r).matchAll(/^fault-(\d+)$/gm)].map((m) => Number(m[1])));

/**
 * The fault lines of waits after a restart, given those seen before it. Lines under a
 * "possibly repeated" note (the server died before the client confirmed the reply that
 * carried them, by calling again) may repeat what was seen: they count once. Any other line
 * must be new. Returns the lines that count and how many were labelled.
 */
function freshFaultLines(results, seenBefore) {
  const seen = new Set(seenBefore);
  let labelled = 0;
  const lines = results.flatMap((r) => {
    const text = textOf(r);
    const repeated = Number(/possibly repeated: the first (\d+) lines? below/.exec(text)?.[1] ?? 0);
    const found = [...text.matchAll(/^fault-(\d+)$/gm)].map((m) => Number(m[1]));
    const skip = Math.min(repeated, found.length);
    labelled += skip;
    return found.filter((n, i) => i >= skip || !seen.has(n));
  });
  return { lines, labelled };
}

/** Kill the server (SIGKILL) while a command prints; restart; every line must arrive, once. */
export async function faults({ instance, runs, lines = 16 }) {
  let session = await startServer(instance.dataDir);
  const recoveries = [];
  const checks = [];
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    const { tty } = (await session.ok('open')).structuredContent;
    await session.ok('wait', { timeout: 10 });
    for (let run = 0; run < runs; run++) {
      const tag = `r${run}`;
      await session.ok('type', { tty, expect: 'bash', text: `for i in $(seq 1 ${lines}); do echo fault-$i; sleep 0.2; done` });
      const before = [await session.ok('wait', { timeout: 0.6 })];
      const killedAt = performance.now();
      await session.kill();
      session = await startServer(instance.dataDir);
      const login = await session.ok('login');
      const recovery = performance.now() - killedAt;
      const adopted = login.structuredContent.adopted.includes(tty);
      // The loop may have ended while no server ran: the shell back at its prompt (input) says so too.
      const after = await waitUntil(session, { timeout: 30, reasons: ['command-finished', 'exited', 'input'] });
      const fresh = freshFaultLines(after, faultLines(before));
      const seen = [...faultLines(before), ...fresh.lines];
      // Lines a long diff leaves out (head and tail shown) count as arriving when the note says exactly how many.
      const elided = [...before, ...after].reduce((n, r) => n + r.structuredContent.changed.reduce((m, c) => m + c.elidedLines, 0), 0);
      const increasing = seen.every((n, i) => i === 0 || n > seen[i - 1]);
      const missing = lines - seen.length;
      const pass = adopted && increasing && seen[0] === 1 && seen.at(-1) === lines && missing === elided;
      recoveries.push(recovery);
      checks.push({ run: tag, pass, adopted, seenBeforeKill: faultLines(before).length, seenAfter: fresh.lines.length, labelledRepeats: fresh.labelled, elided, seen: pass ? undefined : seen });
    }
    await session.ok('close', { tty });
  } finally {
    await session.stop();
  }
  return { recovery: summary(recoveries), checks, pass: checks.every((c) => c.pass) };
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
