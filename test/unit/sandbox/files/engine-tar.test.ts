import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { packTar, readOneFile } from '../../../../src/sandbox/files/engine-tar.js';

/** Every entry of a tar: name, type, mode, owner and bytes. */
async function entries(archive: Buffer): Promise<Array<{ name: string; type: string | undefined; mode: number | undefined; uid: number | undefined; data: string }>> {
  const extract = tar.extract();
  const out: Array<{ name: string; type: string | undefined; mode: number | undefined; uid: number | undefined; data: string }> = [];
  extract.on('entry', (header, body, next) => {
    const chunks: Buffer[] = [];
    body.on('data', (c: Buffer) => chunks.push(c));
    body.on('end', () => {
      out.push({ name: header.name, type: header.type ?? undefined, mode: header.mode, uid: header.uid, data: Buffer.concat(chunks).toString() });
      next();
    });
  });
  const done = new Promise((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  Readable.from([archive]).pipe(extract);
  await done;
  return out;
}

describe('packTar, the one tar writer for the engine archive API (files put in, the shell folder shown)', () => {
  it('writes folders and files in order, owned by root, with their modes and bytes', async () => {
    const archive = await packTar([
      { name: 'tmp/', mode: 0o755 },
      { name: 'tmp/kernel/', mode: 0o700 },
      { name: 'tmp/kernel/bin/ak-mail', mode: 0o755, data: Buffer.from('#!/bin/sh\necho hi\n') },
      { name: 'tmp/kernel/note', mode: 0o644, data: new Uint8Array() },
    ]);
    expect(await entries(archive)).toEqual([
      { name: 'tmp/', type: 'directory', mode: 0o755, uid: 0, data: '' },
      { name: 'tmp/kernel/', type: 'directory', mode: 0o700, uid: 0, data: '' },
      { name: 'tmp/kernel/bin/ak-mail', type: 'file', mode: 0o755, uid: 0, data: '#!/bin/sh\necho hi\n' },
      { name: 'tmp/kernel/note', type: 'file', mode: 0o644, uid: 0, data: '' },
    ]);
  });

  it('round-trips one file through readOneFile, the hostile-side reader', async () => {
    const archive = await packTar([{ name: 'notes.txt', mode: 0o644, data: Buffer.from('hello') }]);
    expect(Buffer.from(await readOneFile(Readable.from([archive]), 'notes.txt', 1024)).toString()).toBe('hello');
  });
});
