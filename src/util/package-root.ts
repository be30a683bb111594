import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodedError } from '../errors.js';

/**
 * This package's root (where package.json and assets/ are), found upward from this file: the
 * same from dist/, from a bin's bundle (dist/bundle/) and from src/ (tests), however deep the caller's folder is.
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'assets'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new CodedError('INTERNAL', `Cannot find the agent-kernel package root above ${fileURLToPath(import.meta.url)}.`);
    dir = parent;
  }
}
