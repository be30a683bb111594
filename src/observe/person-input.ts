import { EventFollower } from './events/event-log.js';

/** Where each event log was read up to, per process (the server has one instance). */
const followers = new Map<string, EventFollower>();

/**
 * What people typed into the terminals (through `agent-kernel web --write`) since the
 * last call, as one sentence for the agent, or undefined. The first call only notes where
 * the log ends: typing from before this server started is not news.
 */
export async function personInputSince(eventsFile: string): Promise<string | undefined> {
  const follower = followers.get(eventsFile);
  if (follower === undefined) {
    followers.set(eventsFile, await EventFollower.atEnd(eventsFile));
    return undefined;
  }
  const keys = new Map<number, number>();
  for (const event of await follower.next(4 * 1024 * 1024)) {
    if (event.type === 'person.typed') keys.set(event.tty, (keys.get(event.tty) ?? 0) + event.bytes);
  }
  if (keys.size === 0) return undefined;
  const parts = [...keys.entries()].sort(([a], [b]) => a - b).map(([tty, bytes]) => `TTY ${tty} (${bytes} byte${bytes === 1 ? '' : 's'})`);
  return `A person typed into ${parts.join(', ')} since your last wait (agent-kernel web). What they typed is in the output below.`;
}
