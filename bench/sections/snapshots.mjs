/**
 * Snapshots of a whole instance (src/snapshot), each figure beside a baseline in the same run:
 * the first snapshot of an instance with content installed in its container and a data
 * directory, against `docker commit` of the container plus `tar` of the data directory; a second
 * snapshot with nothing changed (time and new disk), against the same baseline again; and a
 * restore (container made anew, changes put back and checked), against removing and making a
 * fresh container with nothing put back.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createInstance, engine } from '../lib/instance.mjs';
import { ROOT } from '../lib/paths.mjs';
import { summary } from '../lib/stats.mjs';

const run = promisify(execFile);
const dist = (rel) => import(path.join(ROOT, 'dist', rel));
const [{ takeSnapshot }, { restoreSnapshot }, { openSandbox }, { containerDown, containerUp, containerName }, { silentLogger }] = await Promise.all([
  dist('snapshot/take.js'),
  dist('snapshot/restore.js'),
  dist('sandbox/container/open-sandbox.js'),
  dist('sandbox/container/container.js'),
  dist('log/logger.js'),
]);

async function timed(fn) {
  const began = performance.now();
  const value = await fn();
  return { ms: performance.now() - began, value };
}

/** `docker commit` of the container and `tar` of the data directory: what a person would do by hand. */
async function commitAndTar(name, dataDir) {
  const tag = `ak-bench-commit-${randomBytes(3).toString('hex')}`;
  const tarFile = path.join(os.tmpdir(), `${tag}.tar`);
  const { ms } = await timed(async () => {
    await run('docker', ['commit', '--pause=true', containerName(name), tag]);
    await run('tar', ['-cf', tarFile, '-C', dataDir, '.']);
  });
  await run('docker', ['rmi', '-f', tag]).catch(() => undefined);
  await rm(tarFile, { force: true });
  return ms;
}

export async function snapshots({ created, runs, containerMb, dataMb }) {
  const logger = silentLogger();
  const inst = await createInstance({ name: `bench-${process.pid}-snap` });
  created.push(inst);
  await inst.prebuild();
  const sandbox = await openSandbox(inst.instance, { logger });
  const installed = await sandbox.run(['sh', '-c', `mkdir -p /opt/bench && head -c ${containerMb}M /dev/urandom > /opt/bench/blob && seq 1 2000 | while read i; do echo $i > /opt/bench/f$i; done`], { user: '0', timeoutMs: 600_000 });
  if (installed.exitCode !== 0) throw new Error(`installing in the container failed: ${installed.stderr}`);
  await mkdir(path.join(inst.dataDir, 'work'), { recursive: true });
  await writeFile(path.join(inst.dataDir, 'work', 'data.bin'), randomBytes(dataMb * 1024 * 1024));
  const times = { first: [], firstBaseline: [], second: [], secondNewBytes: [], secondBaseline: [], restore: [], restoreBaseline: [] };
  const first = await timed(() => takeSnapshot(inst.instance, { trigger: 'manual' }));
  times.first.push(first.ms);
  times.firstBaseline.push(await commitAndTar(inst.name, inst.dataDir));
  let secondUnread;
  for (let i = 0; i < runs; i++) {
    const again = await timed(() => takeSnapshot(inst.instance, { trigger: 'manual' }));
    times.second.push(again.ms);
    times.secondNewBytes.push(again.value.newBytes);
    secondUnread = again.value.unread;
    times.secondBaseline.push(await commitAndTar(inst.name, inst.dataDir));
  }
  const docker = await engine();
  // Where a restore's time goes: each progress line until the next (the last until it returns).
  const stages = {};
  const stageOf = (line) => line.replace(/[0-9]+/g, 'N').replace(/agent-kernel-\S+/g, 'C');
  for (let i = 0; i < runs; i++) {
    let last;
    const onProgress = (line) => {
      const now = performance.now();
      if (last) (stages[last.stage] ??= []).push(now - last.at);
      last = { stage: stageOf(line), at: now };
    };
    times.restore.push((await timed(() => restoreSnapshot(inst.instance, first.value.id, { logger, onProgress }))).ms);
    if (last) (stages[last.stage] ??= []).push(performance.now() - last.at);
    times.restoreBaseline.push(
      (
        await timed(async () => {
          await containerDown(docker, inst.instance, { logger });
          await containerUp(docker, inst.instance, { logger });
        })
      ).ms,
    );
  }
  return {
    containerMb,
    dataMb,
    firstBytes: first.value.bytes,
    secondUnread,
    restoreStages: Object.fromEntries(Object.entries(stages).map(([stage, values]) => [stage, summary(values)])),
    ...Object.fromEntries(Object.entries(times).map(([key, values]) => [key, summary(values)])),
  };
}
