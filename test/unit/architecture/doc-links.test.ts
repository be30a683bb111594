import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * README.md is a front door and docs/ holds the rest: every page the README links exists, every
 * page under docs/ is reachable from the README, and every relative link of README.md and docs/
 * (a file, a folder, a heading's anchor in a page) lands somewhere, so a section moved from one
 * page to another cannot leave a link behind that goes nowhere.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const FRONT_DOOR_MAX_LINES = 400;

const pages = (): string[] => [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.posix.join('docs', file.split(path.sep).join('/'))),
];

/** The lines of a page outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    return !fenced;
  });
}

/** GitHub's anchor of a heading: lower case, link markup and punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(readFileSync(path.join(ROOT, file), 'utf8'))) {
    const heading = /^#{1,6} +(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target of a page that is not a URL with a scheme (https:, mailto:). */
function relativeLinks(file: string): string[] {
  const text = prose(readFileSync(path.join(ROOT, file), 'utf8')).join('\n');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Why a link from `file` goes nowhere, or undefined when it lands. */
function broken(file: string, target: string): string | undefined {
  const [where, anchor] = target.split('#', 2) as [string, string | undefined];
  const to = where === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where));
  if (to.startsWith('..') || !existsSync(path.join(ROOT, to))) return `${file}: ${target}: no file ${to}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!to.endsWith('.md') || statSync(path.join(ROOT, to)).isDirectory()) return undefined;
  return anchors(to).has(anchor) ? undefined : `${file}: ${target}: ${to} has no heading with the anchor #${anchor}`;
}

describe('README.md and docs/', () => {
  it('every relative link lands on a file and, with an anchor, on a heading of that page', () => {
    const problems = pages().flatMap((file) => relativeLinks(file).flatMap((target) => broken(file, target) ?? []));
    expect(problems).toEqual([]);
  });

  it('README.md is a front door: under 400 lines, linking every page under docs/', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(FRONT_DOOR_MAX_LINES);
    const linked = new Set(relativeLinks('README.md').map((target) => path.posix.normalize(target.split('#')[0]!)));
    const unlinked = pages().filter((page) => page !== 'README.md' && !linked.has(page));
    expect(unlinked, 'pages under docs/ the README does not link').toEqual([]);
  });

  it('finds a broken anchor and a missing page (the check itself)', () => {
    expect(broken('README.md', 'docs/no-such-page.md')).toMatch(/no file docs\/no-such-page\.md/);
    expect(broken('README.md', '#no-such-heading')).toMatch(/no heading with the anchor #no-such-heading/);
    expect(broken('README.md', '#quickstart')).toBeUndefined();
    expect(slug("Configuration: the operator's file and `system/agent_config.json`")).toBe('configuration-the-operators-file-and-systemagent_configjson');
  });
});
