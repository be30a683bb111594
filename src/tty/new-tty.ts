import { TtyFiles } from '../observe/tty-files.js';
import { Tty, type TtyIdentity } from './tty.js';
import type { TtyContext } from './tty-context.js';

/** A Tty wired to the manager's events and to wake(), with its files in its directory. */
export async function createTty(ctx: TtyContext, identity: TtyIdentity, markAbs: number, scrollbackRows: number): Promise<Tty> {
  const tty = new Tty(identity, markAbs, ctx.events, () => ctx.wake());
  const dir = ctx.paths.tty(tty.number);
  const { scrollbackHasText } = await TtyFiles.prepare(dir);
  tty.attachFiles(
    new TtyFiles(dir, ctx.config.raw_log_max_bytes, () => tty.snapshot(), {
      scrollbackRows: scrollbackHasText ? scrollbackRows : 0,
      scrollbackHasText,
    }),
  );
  return tty;
}
