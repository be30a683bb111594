import { text as readAll } from 'node:stream/consumers';
import { resolveInstance } from '../../../config/instance.js';
import { sendOperatorMessage } from '../../../mail/operator-send.js';
import { prepareMailbox } from '../../../mail/post-office.js';
import { readPaused } from '../../../runner/tick/paused.js';
import { type AgentStatus, queryAgentStatus } from '../../../runner/watch/service/status-api.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'send <name> [--from <label>] [--reply-to <id>] [--] [message...]   (no message: read it from stdin)';

/** Pure: what happens next to a message queued for `name`, from what its watch says (undefined: no watch answered). */
export function deliveryForecast(name: string, live: AgentStatus | undefined, paused: string | undefined): string {
  if (!live) {
    const why = paused === undefined ? '' : ` ${name} is also paused (${paused.split('\n')[0]}): it ticks again after kernel-runner resume ${name}.`;
    return `No watch is running for ${name}: it waits in the queue until kernel-runner watch ${name} (or kernel-runner tick ${name}) runs.${why}`;
  }
  const watch = `watch (pid ${live.watchPid})`;
  const reason = live.reason ? live.reason.split('\n')[0] : '';
  switch (live.state) {
    case 'ticking':
      return `${watch} is running ${live.currentTick?.number === undefined ? 'a tick' : `tick ${live.currentTick.number}`}: the agent gets it during that tick (if the tick ends first, the next one gets it).`;
    case 'limited':
      return `${watch} holds ticks back (${reason}): it waits in the queue until then.`;
    case 'backoff':
      return `${watch} is backing off after failed ticks (${reason}): the next tick gets it.`;
    case 'paused':
      return `${name} is paused (${reason}): it waits in the queue; no tick runs until kernel-runner resume ${name}.`;
    case 'config-error':
      return `${watch} cannot use ${name}'s configuration (${reason}): it waits until that is fixed.`;
    case 'stopping':
      return `${watch} is stopping: it waits in the queue for the next watch.`;
    default:
      return `${watch} is ${live.state}: it starts a tick for it now.`;
  }
}


export const sendCommand: Command = {
  name: 'send',
  summary: "Send the operator's message to an instance (from the arguments or stdin); says where it went and whether a watch picks it up.",
  usage: USAGE,
  options: [
    ["--from LABEL", "who it is from (default: operator)"],
    ["--reply-to ID", "the message it answers"],
    ["--", "what follows is the message, even if it starts with -"],
  ],
  examples: [
    "kernel-runner send scout \"the build is green\"",
    "echo \"long text\" | kernel-runner send scout --from ci",
  ],
  async run(args) {
    const usage = `kernel-runner ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { from: { type: 'string' }, 'reply-to': { type: 'string' } },
      positionals: { min: 1, max: Infinity },
      missing: 'Name an instance.',
    });
    const [name, ...message] = positionals as [string, ...string[]];
    const instance = await resolveInstance(name);
    let text = message.join(' ');
    if (message.length === 0) {
      if (process.stdin.isTTY) throw usageError(usage, 'No message: give it after the name, or pipe it in.');
      text = await readAll(process.stdin);
    }
    const label = values.from;
    const replyTo = values['reply-to'];
    // What the watch was doing as the message arrived decides what happens to it.
    const live = await queryAgentStatus(instance.name);
    const paused = await readPaused(instance.paths).catch(() => undefined);
    const record = await sendOperatorMessage(instance, { text, ...(label ? { label } : {}), ...(replyTo ? { replyTo } : {}) });
    // The agent can read it from its terminals (ak-mail) even before a watch starts.
    await prepareMailbox(instance).catch(() => {});
    out(`${record.id}: queued for ${instance.name} in ${instance.paths.mail.queue} (host-private: the container cannot write there).\n`);
    out(`${deliveryForecast(instance.name, live, paused)}\n`);
    return EXIT.OK;
  },
};
