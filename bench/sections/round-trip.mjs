/**
 * Round trip: an MCP client calls type then wait for `echo hi` (and `true`), over stdio
 * and HTTP. Baselines: the same through silence-settle only (`settleInstance` has
 * tty.detect_input off, and a bash without OSC 133 marks, so wait can only notice the end
 * by tty.settle_ms of silence: the seed's approach), and a raw `docker exec` of the same
 * command (the floor).
 */
import { rawExec } from '../lib/raw-exec.mjs';
import { startServer, textOf } from '../lib/server.mjs';
import { summary } from '../lib/stats.mjs';

async function roundTrips(session, tty, text, runs, expectReason) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const began = performance.now();
    await session.ok('type', { tty, expect: 'bash', text });
    const result = await session.ok('wait', { timeout: 10 });
    const elapsed = performance.now() - began;
    const reason = result.structuredContent.reason;
    if (reason !== expectReason) throw new Error(`type+wait "${text}" ended with ${reason}, not ${expectReason}: ${textOf(result)}`);
    if (text === 'echo hi' && !/^hi$/m.test(textOf(result))) throw new Error(`echo hi: "hi" not in ${textOf(result)}`);
    times.push(elapsed);
  }
  return summary(times);
}

export async function roundTrip({ instance, settleInstance, runs, settleRuns }) {
  const out = {};
  for (const transport of ['stdio', 'http']) {
    const session = await startServer(instance.dataDir, { transport });
    try {
      await session.ok('login');
      await session.ok('wait', { timeout: 10 });
      const { tty } = (await session.ok('open')).structuredContent;
      await session.ok('wait', { timeout: 10 });
      out[`${transport}.echo`] = await roundTrips(session, tty, 'echo hi', runs, 'command-finished');
      out[`${transport}.true`] = await roundTrips(session, tty, 'true', runs, 'command-finished');
      await session.ok('close', { tty });
    } finally {
      await session.stop();
    }
    out[`${transport}.settle.echo`] = await settleRoundTrips(settleInstance, transport, settleRuns);
  }
  const raw = [];
  for (let i = 0; i < runs; i++) {
    const result = await rawExec(instance.name, ['sh', '-c', 'echo hi']);
    if (result.head !== 'hi\n' || result.exitCode !== 0) throw new Error(`raw exec echo hi gave ${JSON.stringify(result.head)} (${result.exitCode})`);
    raw.push(result.elapsedMs);
  }
  out['raw.echo'] = summary(raw);
  return out;
}

/** The baseline: type+wait `echo hi` where only silence (tty.settle_ms) can end a wait. */
export async function settleRoundTrips(settleInstance, transport, runs) {
  const session = await startServer(settleInstance.dataDir, { transport });
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    const settle = (await session.ok('open', { command: 'bash --norc --noprofile -i' })).structuredContent.tty;
    await session.ok('wait', { timeout: 10 });
    const times = await roundTrips(session, settle, 'echo hi', runs, 'settled');
    await session.ok('close', { tty: settle });
    return times;
  } finally {
    await session.stop();
  }
}
