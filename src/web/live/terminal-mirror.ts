import serializeAddon from '@xterm/addon-serialize';
import xterm from '@xterm/headless';
import { parseCastEvent, parseCastHeader } from '../../observe/recording.js';
import { LineFollower } from '../../observe/events/line-follower.js';

/** How much of a long recording a mirror starts from (its end: what the screen shows now). */
const START_MAX_BYTES = 1024 * 1024;
/** Lines of history a page may ask for (search, scrolling back in the focused terminal). */
export const MIRROR_SCROLLBACK = 2000;

export interface Snapshot {
  cols: number;
  rows: number;
  /** The screen (and with `history`, the lines above it) as escape sequences: written to a reset terminal, it draws the same. */
  data: string;
}

export interface MirrorListener {
  output(data: string): void;
  resized(cols: number, rows: number): void;
  /** The mirror started over (a new recording: a new tick, a new terminal of that number): take a new snapshot. */
  restarted(): void;
}

/**
 * One terminal as the web view shows it: a headless emulator fed from the terminal's newest
 * recording, so that a page that opens gets the screen as it is now (a snapshot), then the
 * output that follows, without replaying the whole recording. Listeners hear output in the
 * order the emulator parsed it, so a snapshot plus what follows is exactly the screen.
 */
export class TerminalMirror {
  private readonly term: InstanceType<typeof xterm.Terminal>;
  private readonly serializer = new serializeAddon.SerializeAddon();
  private readonly listeners = new Set<MirrorListener>();
  private follower: LineFollower | undefined;
  private current: string | undefined;

  constructor(private readonly recordingsDir: string) {
    this.term = new xterm.Terminal({ cols: 120, rows: 40, scrollback: MIRROR_SCROLLBACK, allowProposedApi: true });
    this.term.loadAddon(this.serializer);
  }

  /** The recording followed now (a file name in the recordings folder). */
  get recording(): string | undefined {
    return this.current;
  }

  /** Follow `name` from now on (its last part: the screen as it is); undefined: none yet (the terminal printed nothing). */
  async follow(name: string | undefined): Promise<void> {
    if (name === this.current) return;
    this.current = name;
    this.term.reset();
    this.follower = undefined;
    if (name) {
      const follower = new LineFollower(this.recordingsDir, name);
      const head = await follower.read(64 * 1024);
      const header = head?.lines[0] === undefined ? undefined : parseCastHeader(head.lines[0]);
      if (header && this.current === name) {
        this.term.resize(header.cols, header.rows);
        if (head && head.size > START_MAX_BYTES) await follower.seek(head.size - START_MAX_BYTES);
        else if (head) for (const line of head.lines.slice(1)) this.apply(line, false);
        this.follower = follower;
        await this.poll(false);
      }
    }
    await this.drained();
    for (const listener of this.listeners) listener.restarted();
  }

  /** Read what the recording gained; true when there was something. */
  async poll(tell = true): Promise<boolean> {
    const follower = this.follower;
    if (!follower) return false;
    const got = await follower.read();
    if (!got || got.lines.length === 0 || follower !== this.follower) return false;
    for (const line of got.lines) this.apply(line, tell);
    return true;
  }

  private apply(line: string, tell: boolean): void {
    const event = parseCastEvent(line);
    if (!event) return;
    if (event.code === 'o') {
      this.term.write(event.data, () => {
        if (tell) for (const listener of this.listeners) listener.output(event.data);
      });
    } else if (event.code === 'r') {
      const [cols, rows] = event.data.split('x').map(Number);
      if (!cols || !rows || cols > 1000 || rows > 1000) return;
      this.term.write('', () => {
        this.term.resize(cols, rows);
        if (tell) for (const listener of this.listeners) listener.resized(cols, rows);
      });
    }
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => this.term.write('', resolve));
  }

  /** The screen now, and from now on every output to `listener`. */
  subscribe(listener: MirrorListener, history: boolean): Promise<Snapshot> {
    return new Promise((resolve) => {
      this.term.write('', () => {
        this.listeners.add(listener);
        resolve({ cols: this.term.cols, rows: this.term.rows, data: this.serializer.serialize({ scrollback: history ? MIRROR_SCROLLBACK : 0 }) });
      });
    });
  }

  unsubscribe(listener: MirrorListener): void {
    this.listeners.delete(listener);
  }

  get watched(): boolean {
    return this.listeners.size > 0;
  }

  dispose(): void {
    this.listeners.clear();
    this.follower = undefined;
    this.term.dispose();
  }
}
