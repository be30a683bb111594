import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';
import { packageRoot } from '../util/package-root.js';
import { shellQuote } from '../util/shell-quote.js';

/**
 * `ak-mail`: the post office from the agent's terminals. A POSIX shell script the host writes
 * into the instance's shell folder (`bin/ak-mail`, shown read-only in the container at
 * `<data>/tmp/kernel/bin/`, on the integrated shell's PATH), so it exists in every instance
 * whatever its image, and the agent cannot change it. It only writes files into the agent's
 * own `outbox/` and reads the view (mail-view.ts): everything that matters is decided on the host.
 */

export const MAIL_COMMAND = 'ak-mail';

/** The script (assets/ak-mail.sh), read once from this install, never from the data directory. */
let template: string | undefined;

/** The script for one instance: its name and folders on the three lines the template keeps for them. */
export function mailScript(options: { instance: string; view: string; outbox: string }): string {
  template ??= readFileSync(path.join(packageRoot(), 'assets', 'ak-mail.sh'), 'utf8');
  const values: Record<string, string> = { instance: options.instance, view: options.view, outbox: options.outbox };
  return template.replace(/^(me|view|outbox)='@(instance|view|outbox)@'$/gm, (_line, name: string, key: string) => `${name}=${shellQuote(values[key] ?? '', true)}`);
}

/** Write the script into the instance's shell folder (read-only in the container). */
export async function installMailScript(binDir: string, options: { instance: string; view: string; outbox: string }): Promise<string> {
  await mkdir(binDir, { recursive: true, mode: 0o755 });
  const file = path.join(binDir, MAIL_COMMAND);
  await writeFileAtomic(file, mailScript(options), 0o755, { durable: false });
  return file;
}
