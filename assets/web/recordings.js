import { h, getJson, duration, time, table } from './dom.js';

const api = (name, ...rest) => `/api/instances/${[name, ...rest].map(encodeURIComponent).join('/')}`;
const href = (name, ...rest) => `#/i/${[name, ...rest].map(encodeURIComponent).join('/')}`;

/** How long a command ran, read as a person says it: 12 ms, 1.4 s, 2m 5s. */
export function took(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return duration(ms);
}

/** A point in a recording, as the player's clock shows it: 0:07, 12:30. */
function clockAt(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// ---------------------------------------------------------------- the list, newest first

export async function recordingsView(body, name) {
  const recordings = await getJson(api(name, 'recordings'));
  const rows = recordings.map((r) =>
    h(
      'tr',
      { 'data-file': r.file },
      h('td', {}, h('a', { href: href(name, 'replay', r.file) }, `TTY ${r.tty}${r.part > 1 ? ` (${r.part})` : ''}`)),
      h('td', {}, r.between ? h('span', { class: 'muted' }, 'between ticks, after ', h('a', { href: href(name, 'tick', String(r.tick)) }, `#${r.tick}`)) : h('a', { href: href(name, 'tick', String(r.tick)) }, `#${r.tick}`)),
      h('td', { class: 'nowrap' }, r.started ? time(r.started) : ''),
      h('td', { class: 'nowrap' }, clockAt(r.durationS)),
      h('td', { class: 'commands-cell' }, r.commandCount === 0 ? h('span', { class: 'muted' }, 'no command') : [r.commands.slice(0, 3).map((c) => h('code', {}, c)), r.commandCount > 3 ? h('span', { class: 'muted' }, ` +${r.commandCount - 3} more`) : '']),
      h('td', { class: 'muted nowrap' }, `${Math.ceil(r.size / 1024)} KiB`),
    ),
  );
  body.replaceChildren(
    h('h1', {}, `${name}: recordings`),
    h('p', { class: 'muted' }, `Newest first. In a terminal: agent-kernel play ${name} <file> (filtered like attach; a raw asciinema play passes the agent's clipboard writes and titles to your terminal).`),
    recordings.length === 0 ? h('p', { class: 'muted' }, 'No recording yet.') : table(['Terminal', 'Tick', 'Started', 'Length', 'Commands', 'Size'], rows),
  );
  return () => {};
}

// ---------------------------------------------------------------- one replay, like asciinema's player

export async function replayView(body, name, file) {
  const { create } = await import('/vendor/asciinema-player/index.js');
  const { commands, durationS, recordedS } = await getJson(api(name, 'recordings', file, 'commands'));
  const stage = h('div', { class: 'player' });
  let player;
  const list = h(
    'ol',
    { class: 'commands' },
    commands.map((c) =>
      h(
        'li',
        { 'data-marker': c.marker },
        h(
          'button',
          { type: 'button', title: `Play from ${clockAt(c.time)}`, onclick: () => (player.seek({ marker: c.marker }), player.play()) },
          h('span', { class: 'at muted' }, clockAt(c.time)),
          h('code', {}, c.command),
          c.exitCode === undefined ? h('span', { class: 'muted' }, 'no exit recorded') : h('span', { class: c.exitCode === '0' ? 'muted' : 'error' }, `exit ${c.exitCode}`),
          c.durationMs === undefined ? '' : h('span', { class: 'muted took' }, took(c.durationMs)),
        ),
      ),
    ),
  );
  const parsed = /^tty_(\d+)-(tick|between)-(\d+)/.exec(file);
  body.replaceChildren(
    h('h1', {}, `${name}: ${file}`),
    h(
      'p',
      { class: 'muted replay-facts' },
      parsed
        ? [
            h('span', {}, `TTY ${parsed[1]}`),
            parsed[2] === 'between'
              ? h('span', {}, 'between ticks, after ', h('a', { href: href(name, 'tick', String(Number(parsed[3]))) }, `tick #${Number(parsed[3])}`))
              : h('a', { href: href(name, 'tick', String(Number(parsed[3]))) }, `tick #${Number(parsed[3])}`),
          ]
        : '',
      h('span', { class: 'length' }, `${clockAt(durationS)} to play`),
      recordedS - durationS >= 1 ? h('span', {}, `recorded over ${clockAt(recordedS)} (pauses over 2 s shortened)`) : '',
      h('span', {}, `${commands.length} command${commands.length === 1 ? '' : 's'}`),
    ),
    h('div', { class: 'replay' }, stage, h('aside', {}, h('h2', {}, 'Commands'), commands.length ? list : h('p', { class: 'muted' }, 'No command was typed in this recording.'))),
  );
  // A frame shows before play (the screen once the first command has finished: it and its
  // output), and the control bar (play, position, progress) stays visible instead of on hover.
  const first = commands[0];
  const posterAt = Math.min(durationS, first ? (first.endTime ?? first.time) + 0.05 : 0.5);
  player = create(api(name, 'recordings', file), stage, { fit: 'both', idleTimeLimit: 2, terminalFontFamily: 'monospace', preload: true, controls: true, poster: `npt:${posterAt.toFixed(3)}` });
  return () => player.dispose();
}
