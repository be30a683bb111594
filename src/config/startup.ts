import { z } from 'zod';
import { dataPaths } from './paths.js';
import { parseWith, readJsonFile } from './parse.js';

/**
 * `<data>/system/startup.json`: the terminals `login` opens. TTY 0 gets its startup
 * command (for instance a mail reader or a status script); the others open a shell
 * unless they name a command.
 *
 *   { "terminals": [ { "tty": 0, "command": "cat system/notes.md; bash" } ] }
 */
export const startupSchema = z.strictObject({
  $schema: z.string().optional(),
  terminals: z
    .array(
      z.strictObject({
        tty: z.int().min(0).max(19),
        command: z.string().min(1).optional().describe('run instead of the default shell'),
        cwd: z.string().optional().describe('working directory inside the container (default: the data directory)'),
      }),
    )
    .default([{ tty: 0 }])
    .refine((list) => new Set(list.map((t) => t.tty)).size === list.length, 'each tty may appear once'),
});

export type StartupConfig = z.output<typeof startupSchema>;

export function parseStartup(input: unknown, file = 'startup.json'): StartupConfig {
  return parseWith(startupSchema, input ?? {}, file);
}

export async function loadStartup(dataDir: string): Promise<StartupConfig> {
  const file = dataPaths(dataDir).startup;
  return parseStartup(await readJsonFile(file, dataPaths(dataDir).root), file);
}
