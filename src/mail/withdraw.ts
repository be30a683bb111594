import { mkdir } from 'node:fs/promises';
import type { Instance } from '../config/instance.js';
import { instancePaths } from '../config/paths.js';
import { loadRegistry } from '../config/registry.js';
import { CodedError } from '../errors.js';
import { appendEvent } from '../observe/events/event-log.js';
import { MESSAGE_ID, type MailRecord, senderName } from './mail-record.js';
import { claim, findReceived } from './mail-store.js';
import { hideReceived, showSent } from './mail-view.js';

/**
 * The operator takes back a message its recipient's model has not had (the web view's mail page,
 * and the CLI): it moves from `queue/` to `withdrawn/` (host-private, kept: nothing is lost), the
 * agent's rendered copy goes, and a sending agent's view says it was withdrawn. The move is one
 * rename, so it and a delivery never both take the message; a running tick that was already
 * handed its text may still show it to the model (watch then finds nothing to mark delivered).
 */
export async function withdrawMessage(instance: Pick<Instance, 'name' | 'paths'>, id: string, env: NodeJS.ProcessEnv = process.env): Promise<MailRecord> {
  if (!MESSAGE_ID.test(id)) throw new CodedError('USAGE', `${JSON.stringify(id)} is not a message id (m-…; kernel-runner mail ${instance.name} lists them).`);
  const { mail } = instance.paths;
  const record = await findReceived(mail, id);
  if (!record) throw new CodedError('USAGE', `${instance.name} has no message ${id} waiting (kernel-runner mail ${instance.name} lists its messages).`);
  if (record.delivered) {
    throw new CodedError('USAGE', `Message ${id} cannot be withdrawn: ${instance.name}'s model already had it${record.delivered.tick === undefined ? '' : ` in tick ${record.delivered.tick}`}. Send a correction: kernel-runner send ${instance.name} "…".`);
  }
  await mkdir(mail.withdrawn, { recursive: true, mode: 0o700 });
  if (!(await claim(mail.queue, mail.withdrawn, id))) {
    throw new CodedError('USAGE', `Message ${id} cannot be withdrawn: it left the queue (delivered just now; kernel-runner mail ${instance.name} shows it).`);
  }
  await hideReceived(mail, id);
  // The event log keeps what was taken back (its text, and the ticks that were handed it).
  await appendEvent(instance.paths.events, {
    type: 'message.withdrawn',
    id,
    from: senderName(record.from),
    to: instance.name,
    text: record.text.slice(0, 4096),
    ...(record.handed?.length ? { handedTo: record.handed } : {}),
  });
  if (record.from.kind === 'agent') {
    const entry = (await loadRegistry(env)).instances[record.from.name];
    if (entry) await showSent(instancePaths(record.from.name, entry.dir, env).mail, record, `withdrawn by the operator before ${instance.name} read it`);
  }
  return record;
}
