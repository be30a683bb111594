import { z } from 'zod';
import { readJsonFile } from '../config/parse.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * `<state>/sessions/registry.json` (`instancePaths().terminalRegistry`; host-private, shown
 * read-only to the container at `<data>/tmp/sessions/registry.json`): the open terminals,
 * rewritten by the terminal manager on every lifecycle event (writeTerminalRegistry), read by
 * the runner (terminals left open at the end of a tick), the web view and people who attach.
 * Every reader and writer goes through this module.
 */
export const registryTerminalSchema = z.looseObject({
  tty: z.int().min(0),
  command: z.string(),
  program: z.string(),
  alive: z.boolean(),
  exitCode: z.int().optional(),
  openedAt: z.string(),
  dir: z.string(),
  /** Background jobs an idle shell still ran when wait last looked ("sleep (pid 42, 1 MB)"). */
  background: z.array(z.string()).optional(),
});

export const terminalRegistrySchema = z.looseObject({
  instance: z.string(),
  sandbox: z.string(),
  updatedAt: z.string(),
  /** Where to attach, when the terminals are in tmux. */
  tmuxSocket: z.string().optional(),
  /** false when the terminals end with the server (node-pty). */
  persistent: z.boolean().optional(),
  ttys: z.array(registryTerminalSchema),
});

export type TerminalRegistry = z.input<typeof terminalRegistrySchema>;
export type RegistryTerminal = z.output<typeof registryTerminalSchema>;

/**
 * The registry, or undefined when there is none. The file is in the directory the container
 * can write: one that does not match the schema is an error naming the bad fields.
 */
export async function readTerminalRegistry(file: string): Promise<z.output<typeof terminalRegistrySchema> | undefined> {
  const input = await readJsonFile(file);
  if (input === undefined) return undefined;
  const result = terminalRegistrySchema.safeParse(input);
  if (!result.success) throw new Error(`${file} is not a terminal registry: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** Rewrite the registry, atomically. */
export async function writeTerminalRegistry(file: string, registry: TerminalRegistry): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(registry, null, 2)}\n`);
}
