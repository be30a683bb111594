/**
 * Several instances served from one host: 1, 4 and 8 servers (one container each), each
 * with one terminal; server memory and type+wait latency while every client works at once.
 */
import { startServer } from '../lib/server.mjs';
import { median, summary } from '../lib/stats.mjs';

async function ensureTty(session) {
  const open = (await session.ok('wait', { timeout: 0 })).structuredContent.open;
  if (open.length > 0) return open[0].tty;
  const { tty } = (await session.ok('open')).structuredContent;
  await session.ok('wait', { timeout: 10 });
  return tty;
}

export async function scale({ instances, counts = [1, 4, 8], runs }) {
  const out = {};
  for (const count of counts) {
    const sessions = [];
    try {
      // Started together: the servers of one host come up side by side.
      await Promise.all(
        instances.slice(0, count).map(async (inst) => {
          const session = await startServer(inst.dataDir);
          sessions.push(session);
          await session.ok('login');
          session.tty = await ensureTty(session);
        }),
      );
      const times = [];
      await Promise.all(
        sessions.map(async (session) => {
          for (let i = 0; i < runs; i++) {
            const began = performance.now();
            await session.ok('type', { tty: session.tty, expect: 'bash', text: 'echo hi' });
            await session.ok('wait', { timeout: 10 });
            times.push(performance.now() - began);
          }
        }),
      );
      const rss = [];
      const own = [];
      for (const session of sessions) {
        rss.push(await session.rss());
        own.push(await session.privateMemory());
      }
      out[count] = {
        echo: summary(times),
        rssTotal: rss.reduce((a, b) => a + b, 0),
        rssEach: rss,
        rssPerInstance: median(rss),
        privateEach: own,
        privatePerInstance: median(own),
      };
    } finally {
      for (const session of sessions) await session.stop();
    }
  }
  return out;
}
