/** Program names as `type`'s `expect` compares them. */

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'fish', 'ksh', 'mksh', 'ash', 'tcsh', 'csh']);

/** `/usr/bin/python3.11` → `python3.11`; `-bash` (a login shell) → `bash`. */
export function normalizeProgram(name: string): string {
  const base = name.trim().split('/').pop() ?? '';
  return base.replace(/^-/, '').toLowerCase();
}

/** The name without a trailing version: `python3.11` → `python`, `node20` → `node`. */
function stem(name: string): string {
  return name.replace(/[\d.]+$/, '').replace(/[-_]$/, '');
}

/**
 * Does what the agent expects match what runs? Exact after normalising, or equal once
 * versions are dropped only from the side that has more of them: `python3` matches
 * `python3.11` and `python`, but `python2` does not match `python3`.
 */
export function programMatches(expected: string, actual: string): boolean {
  const e = normalizeProgram(expected);
  const a = normalizeProgram(actual);
  if (e === '' || a === '') return false;
  if (e === a) return true;
  if (stem(e) !== stem(a)) return false;
  return a.startsWith(e) || e.startsWith(a);
}

export function isShell(program: string): boolean {
  return SHELLS.has(normalizeProgram(program));
}
