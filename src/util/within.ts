import { realpathSync } from 'node:fs';
import path from 'node:path';

/** The real path of `p`: its deepest existing ancestor's, links resolved, with the rest appended. */
function realPathOf(p: string): string {
  const rest: string[] = [];
  let head = path.resolve(p);
  for (;;) {
    try {
      return path.join(realpathSync(head), ...rest);
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return path.resolve(p);
      rest.unshift(path.basename(head));
      head = parent;
    }
  }
}

function under(dir: string, parent: string): boolean {
  const rel = path.relative(parent, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** `dir` is `parent` or inside it, by name or once links are resolved (a data directory named through a link). */
export function isWithin(dir: string, parent: string): boolean {
  return under(path.resolve(dir), path.resolve(parent)) || under(realPathOf(dir), realPathOf(parent));
}
