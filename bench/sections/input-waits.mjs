/**
 * Waits for programs that want input (issue 12): how long type+wait takes to come back when
 * the program is ready for the next keys: a python REPL starting, an expression in it, vi
 * opening, a line prompt (`input()`), bash's `read -p`, and prompts read from /dev/tty (Python's
 * getpass, as sudo, ssh and git ask for passwords; `read < /dev/tty`). Baseline: silence settling (the
 * seed's approach: done when nothing printed for tty.settle_ms), measured in this run by the
 * round-trip section (`settle.echo`: an instance with tty.detect_input off). Python's own
 * start-up as an interactive REPL does it (`import readline, rlcompleter`), timed inside the
 * container between the same rounds, says what share of "REPL start" is Python's.
 */
import { rawExec } from '../lib/raw-exec.mjs';
import { startServer, textOf } from '../lib/server.mjs';
import { settleRoundTrips } from './round-trip.mjs';
import { summary } from '../lib/stats.mjs';

/** One start of Python as a REPL starts (interpreter, site, readline), timed in the container (ms). */
async function pythonStartMs(instanceName) {
  const script = `s=$EPOCHREALTIME; python3 -c 'import readline, rlcompleter'; e=$EPOCHREALTIME; echo $(( (\${e/./} - \${s/./}) ))`;
  const r = await rawExec(instanceName, ['bash', '-c', script]);
  const us = Number(r.head.trim());
  if (r.exitCode !== 0 || !Number.isFinite(us)) throw new Error(`timing python3 start-up failed: ${r.head} ${r.stderr}`);
  return us / 1000;
}

/** type, then wait; checks the wait ended for the reason and shows `expectText`; returns ms. */
async function timed(session, tty, expect, text, { reasons, expectText }) {
  const began = performance.now();
  await session.ok('type', { tty, expect, text });
  const result = await session.ok('wait', { timeout: 20 });
  const elapsed = performance.now() - began;
  const reason = result.structuredContent.reason;
  if (!reasons.includes(reason)) throw new Error(`type "${text}" then wait ended with ${reason}, not ${reasons.join('/')}: ${textOf(result)}`);
  if (expectText && !expectText.test(textOf(result))) throw new Error(`type "${text}": ${expectText} not in ${textOf(result)}`);
  return elapsed;
}

export async function inputWaits({ instance, settleInstance, runs }) {
  const session = await startServer(instance.dataDir);
  const times = { replStart: [], replExpression: [], viOpen: [], inputPrompt: [], readPrompt: [], getpassPrompt: [], devTtyRead: [], pythonStart: [] };
  try {
    await session.ok('login');
    await session.ok('wait', { timeout: 10 });
    const { tty } = (await session.ok('open')).structuredContent;
    await session.ok('wait', { timeout: 10 });
    for (let i = 0; i < runs; i++) {
      times.pythonStart.push(await pythonStartMs(instance.name));
      times.replStart.push(await timed(session, tty, 'bash', 'python3 -q', { reasons: ['input', 'settled'], expectText: /^>>>/m }));
      times.replExpression.push(await timed(session, tty, 'python3', `6*${i + 7}`, { reasons: ['input', 'settled'], expectText: new RegExp(`^${6 * (i + 7)}$`, 'm') }));
      await timed(session, tty, 'python3', 'exit()', { reasons: ['command-finished', 'input'] });
      times.viOpen.push(await timed(session, tty, 'bash', `vi /tmp/bench-${i}.txt`, { reasons: ['input', 'settled'] }));
      await timed(session, tty, 'vi', ':q!', { reasons: ['command-finished', 'input'] });
      times.inputPrompt.push(await timed(session, tty, 'bash', `python3 -c 'print(input("name? "))'`, { reasons: ['input'], expectText: /name\?/ }));
      await timed(session, tty, 'python3', 'ada', { reasons: ['command-finished'], expectText: /^ada$/m });
      times.readPrompt.push(await timed(session, tty, 'bash', `read -p 'name? ' answer`, { reasons: ['input'], expectText: /name\?/ }));
      await timed(session, tty, 'bash', 'bob', { reasons: ['command-finished'] });
      times.getpassPrompt.push(await timed(session, tty, 'bash', `python3 -c 'import getpass; getpass.getpass("secret? ")'`, { reasons: ['input'], expectText: /secret\?/ }));
      await timed(session, tty, 'python3', 'hunter2', { reasons: ['command-finished'] });
      times.devTtyRead.push(await timed(session, tty, 'bash', `read -p 'tty? ' answer < /dev/tty`, { reasons: ['input'], expectText: /tty\?/ }));
      await timed(session, tty, 'bash', 'yes', { reasons: ['command-finished'] });
    }
    await session.ok('close', { tty });
  } finally {
    await session.stop();
  }
  const out = Object.fromEntries(Object.entries(times).map(([key, values]) => [key, summary(values)]));
  out.settleEcho = await settleRoundTrips(settleInstance, 'stdio', Math.min(runs, 5));
  return out;
}
