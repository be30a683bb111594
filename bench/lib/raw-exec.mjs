/**
 * The floor: a raw `docker exec` of a command in the instance's container (dockerode, plain
 * pipes, no TTY, no tmux, no emulator), timed from exec create to the end of its output.
 */
import { Writable } from 'node:stream';
import { containerOf, engine } from './instance.mjs';

export async function rawExec(instanceName, argv, { keep = 64 * 1024 } = {}) {
  const container = await containerOf(instanceName);
  const { docker } = await engine();
  const began = performance.now();
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  let bytes = 0;
  const kept = [];
  let keptBytes = 0;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      bytes += chunk.length;
      if (keptBytes < keep) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      done();
    },
  });
  let stderr = '';
  const errors = new Writable({
    write(chunk, _encoding, done) {
      if (stderr.length < keep) stderr += chunk.toString();
      done();
    },
  });
  docker.modem.demuxStream(stream, sink, errors);
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
  });
  const elapsedMs = performance.now() - began;
  const { ExitCode } = await exec.inspect();
  return { elapsedMs, bytes, exitCode: ExitCode, head: Buffer.concat(kept).toString('utf8'), stderr };
}
