/**
 * The second boundary's cost: the same figures on two instances of one engine, one with the
 * engine's boundary (container.boundary "engine": under dockerd --userns-remap, container root is
 * an unprivileged host uid) and one without it (container.boundary "none": the remapping off for
 * that container, root in it is host root). Samples alternate between the two, so both see the
 * same load. On an engine without a boundary both columns are the same set-up (the table says so).
 */
import path from 'node:path';
import { createInstance, engine } from '../lib/instance.mjs';
import { ROOT } from '../lib/paths.mjs';
import { startServer, textOf } from '../lib/server.mjs';
import { summary } from '../lib/stats.mjs';

const dist = (rel) => import(path.join(ROOT, 'dist', rel));
const [{ engineBoundary, describeBoundary }, { containerDown, containerUp }, { silentLogger }] = await Promise.all([dist('sandbox/container/user-namespace.js'), dist('sandbox/container/container.js'), dist('log/logger.js')]);

async function timed(session, tty, expect, text, reasons, expectText) {
  const began = performance.now();
  await session.ok('type', { tty, expect, text });
  let result = await session.ok('wait', { timeout: 50 });
  // seq's output takes several waits; the figure is until the one that says it finished.
  while (reasons.includes('command-finished') && !reasons.includes(result.structuredContent.reason) && result.structuredContent.reason !== 'timeout') result = await session.ok('wait', { timeout: 50 });
  const elapsed = performance.now() - began;
  if (!reasons.includes(result.structuredContent.reason)) throw new Error(`type "${text}" then wait ended with ${result.structuredContent.reason}: ${textOf(result)}`);
  if (expectText && !expectText.test(textOf(result))) throw new Error(`type "${text}": ${expectText} not in ${textOf(result)}`);
  return elapsed;
}

/** One sample of each figure on an open session. */
async function sample(session, tty, i, times) {
  times.echo.push(await timed(session, tty, 'bash', 'echo hi', ['command-finished'], /^hi$/m));
  times.inputPrompt.push(await timed(session, tty, 'bash', `python3 -c 'print(input("name? "))'`, ['input'], /name\?/));
  await timed(session, tty, 'python3', 'ada', ['command-finished']);
  times.replStart.push(await timed(session, tty, 'bash', 'python3 -q', ['input', 'settled'], /^>>>/m));
  await timed(session, tty, 'python3', 'exit()', ['command-finished', 'input']);
  if (i < times.seqRuns) times.seq.push(await timed(session, tty, 'bash', 'seq 1 1000000', ['command-finished']));
}

export async function boundary({ created, runs, seqRuns, startRuns }) {
  const found = await engineBoundary(await engine());
  const variants = [
    ['without', { container: { boundary: 'none' } }],
    ['with', {}],
  ];
  const instances = {};
  for (const [key, config] of variants) {
    const inst = await createInstance({ name: `bench-${process.pid}-boundary-${key}`, config });
    created.push(inst);
    await inst.prebuild();
    instances[key] = inst;
  }
  const times = Object.fromEntries(variants.map(([key]) => [key, { echo: [], inputPrompt: [], replStart: [], seq: [], seqRuns, startUp: [], containerUp: [] }]));
  const sessions = {};
  try {
    for (const [key] of variants) {
      const session = await startServer(instances[key].dataDir);
      await session.ok('login');
      await session.ok('wait', { timeout: 10 });
      const { tty } = (await session.ok('open')).structuredContent;
      await session.ok('wait', { timeout: 10 });
      sessions[key] = { session, tty };
    }
    for (let i = 0; i < runs; i++) for (const [key] of variants) await sample(sessions[key].session, sessions[key].tty, i, times[key]);
  } finally {
    for (const { session } of Object.values(sessions)) await session.stop();
  }
  const logger = silentLogger();
  for (let i = 0; i < startRuns; i++) {
    for (const [key] of variants) {
      const inst = instances[key];
      const session = await startServer(inst.dataDir);
      try {
        await session.ok('login');
        times[key].startUp.push(performance.now() - session.spawnedAt);
      } finally {
        await session.stop();
      }
      // The container made and started from nothing (its image built): where a user namespace costs, if anywhere.
      await containerDown(await engine(), inst.instance, { logger });
      const began = performance.now();
      await containerUp(await engine(), inst.instance, { logger });
      times[key].containerUp.push(performance.now() - began);
    }
  }
  const out = { engine: found.kind, described: describeBoundary(found.kind, found.hostIds) };
  for (const [key] of variants) out[key] = Object.fromEntries(Object.entries(times[key]).filter(([, v]) => Array.isArray(v)).map(([figure, values]) => [figure, summary(values)]));
  return out;
}
