import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'results' ? [] : filesUnder(full, ext);
    return ext.test(e.name) ? [full] : [];
  });
}

/** Every module of dist/ a script names, as `dist('a/b.js')` or `path.join(ROOT, 'dist', 'a', 'b.js')`. */
function distModulesNamed(text: string): string[] {
  const named = [...text.matchAll(/\bdist\(\s*['"]([^'"]+\.js)['"]\s*\)/g)].map((m) => m[1] ?? '');
  // A fixture's static import of the build: '../../../dist/a/b.js'.
  named.push(...[...text.matchAll(/['"](?:\.\.\/)+dist\/([^'"]+\.js)['"]/g)].map((m) => m[1] ?? ''));
  for (const m of text.matchAll(/'dist'((?:\s*,\s*'[^']+')+)\)/g)) {
    const parts = [...(m[1] ?? '').matchAll(/'([^']+)'/g)].map((p) => p[1] ?? '');
    if (parts.at(-1)?.endsWith('.js')) named.push(parts.join('/'));
  }
  return named;
}

describe('scripts that load the build', () => {
  it('finds all three spellings (so the check below can fail)', () => {
    expect(distModulesNamed(`const a = dist('tty/tmux-server.js'); import(path.join(ROOT, 'dist', 'sandbox', 'open-sandbox.js')); import { x } from '../../../dist/util/pid-lock.js';`)).toEqual(['tty/tmux-server.js', 'util/pid-lock.js', 'sandbox/open-sandbox.js']);
  });

  it('name only modules that exist in src/ (a file moved without its bench or fixture paths breaks npm run bench or a test at its first import)', () => {
    const missing: string[] = [];
    for (const file of [...filesUnder(path.join(ROOT, 'bench'), /\.m?js$/), ...filesUnder(path.join(ROOT, 'test', 'fixtures'), /\.m?js$/)]) {
      for (const rel of distModulesNamed(readFileSync(file, 'utf8'))) {
        if (rel.startsWith('bundle/')) continue;
        if (!existsSync(path.join(ROOT, 'src', rel.replace(/\.js$/, '.ts')))) missing.push(`${path.relative(ROOT, file)}: dist/${rel}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
