import { TtyFiles } from '../../observe/tty-files.js';
import { Tty, type TtyIdentity } from '../terminal/tty.js';
import type { TtyContext } from '../terminal/tty-context.js';

/** A Tty wired to the manager's events and to wake(), with its files in its directory. */
export async function createTty(ctx: TtyContext, identity: TtyIdentity, markAbs: number, scrollbackRows: number): Promise<Tty> {
  const tty = new Tty(identity, markAbs, ctx.events, () => ctx.wake());
  tty.attachFiles(
    await TtyFiles.open(ctx.paths.tty(tty.number), {
      rawMaxBytes: ctx.config.raw_log_max_bytes,
      scrollbackMaxBytes: ctx.config.scrollback_max_bytes,
      scrollbackRows,
      snapshot: () => tty.snapshot(),
    }),
  );
  return tty;
}
