import { h, time } from './dom.js';
import { openLive } from './live.js';
import { took } from './recordings.js';

const href = (name, ...rest) => `#/i/${[name, ...rest].map(encodeURIComponent).join('/')}`;

/** Kinds shown folded by default: one line per terminal each time it waits, the flood of the log. */
const FOLDED = new Set(['tty.waiting-for-input']);
const MAX_ROWS = 2000;

/** A host path's last part: the events name files the page links to, not where the host keeps them. */
const base = (p) => String(p).split('/').filter(Boolean).at(-1) ?? String(p);

function recordingLink(instance, recording) {
  if (typeof recording !== 'string') return '';
  return h('a', { href: href(instance, 'replay', base(recording)), class: 'recording', title: 'Replay this terminal' }, '▶ replay');
}

const tty = (n) => (n === undefined ? '' : h('span', { class: 'tty' }, `TTY ${n}`));

/** Pure-ish: one event's fields as a person reads them (the raw line stays in the row's title). */
function details(e) {
  const { instance } = e;
  switch (e.type) {
    case 'command.started':
      return [tty(e.tty), h('code', {}, `$ ${e.command ?? ''}`), recordingLink(instance, e.recording)];
    case 'command.finished':
      return [
        tty(e.tty),
        h('code', {}, `$ ${e.command ?? ''}`),
        h('span', { class: e.exitCode === 0 ? 'muted' : 'error' }, `exit ${e.exitCode ?? '?'}`),
        e.durationMs === undefined ? '' : h('span', { class: 'muted' }, `after ${took(e.durationMs)}`),
        recordingLink(instance, e.recording),
      ];
    case 'tty.opened':
      return [tty(e.tty), 'opened', e.command ? h('code', {}, e.command) : ''];
    case 'tty.closed':
      return [tty(e.tty), 'closed', e.archivedTo ? h('span', { class: 'muted' }, `its scrollback kept as logs/sessions/${base(e.archivedTo)}`) : ''];
    case 'tty.waiting-for-input':
      return [tty(e.tty), h('code', {}, e.program ?? 'a program'), 'waits for input'];
    case 'tick.started':
      return [e.trigger ? `started by ${e.trigger}` : 'started', e.tick === undefined ? '' : h('a', { href: href(instance, 'tick', String(e.tick)) }, 'transcript')];
    case 'tick.ended':
      return [
        h('span', { class: e.status === 'ok' ? 'good' : e.status === 'interrupted' ? 'warn' : 'error' }, `${e.status ?? 'ended'}${e.errorClass ? ` (${e.errorClass})` : ''}`),
        e.durationMs === undefined ? '' : `after ${took(e.durationMs)}`,
        e.error ? h('span', { class: 'error' }, e.error) : '',
        e.tick === undefined ? '' : h('a', { href: href(instance, 'tick', String(e.tick)) }, 'transcript'),
      ];
    case 'message.received':
    case 'message.delivered':
      return [`from ${e.from ?? '?'} to ${e.to ?? '?'}`, e.replyTo ? h('span', { class: 'muted' }, `answers ${e.replyTo}`) : '', h('a', { href: href(instance, 'mail'), class: 'muted' }, e.id ?? 'mail')];
    default: {
      const shown = Object.entries(e).filter(([k]) => !['time', 'type', 'tick', 'instance'].includes(k));
      return shown.map(([k, v]) => h('span', { class: 'field' }, h('span', { class: 'muted' }, `${k} `), typeof v === 'string' ? (v.startsWith('/') ? base(v) : v) : JSON.stringify(v)));
    }
  }
}

export async function eventsView(body, name) {
  const rows = h('tbody', {});
  const kinds = new Set();
  const instances = new Set();
  const folded = { count: 0 };
  const kindSelect = h('select', { onchange: () => apply(), 'aria-label': 'kind' }, h('option', { value: '' }, 'every kind'));
  const instanceSelect = h('select', { onchange: () => apply(), 'aria-label': 'instance' }, h('option', { value: '' }, 'every instance'));
  const showFolded = h('input', { type: 'checkbox', class: 'show-folded', onchange: () => apply() });
  const foldedLabel = h('span', {}, 'terminals waiting for input (0)');
  const apply = () => {
    for (const tr of rows.children) {
      const type = tr.dataset.type;
      const byKind = kindSelect.value ? type === kindSelect.value || type.startsWith(`${kindSelect.value}.`) : !FOLDED.has(type) || showFolded.checked;
      tr.hidden = !byKind || Boolean(instanceSelect.value && tr.dataset.instance !== instanceSelect.value);
    }
  };
  const option = (select, set, value) => {
    if (set.has(value)) return;
    set.add(value);
    select.append(h('option', { value }, value));
  };
  const headers = ['Time', ...(name ? [] : ['Instance']), 'Tick', 'Event', 'What happened'];
  body.replaceChildren(
    h('h1', {}, name ? `${name}: events` : 'Events'),
    h('div', { class: 'filters' }, kindSelect, name ? '' : instanceSelect, h('label', { class: 'muted' }, showFolded, ' ', foldedLabel), h('span', { class: 'muted' }, `Newest first. Also: agent-kernel events ${name ?? '<name>'} --follow`)),
    h('table', { class: 'events' }, h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))), rows),
  );
  return openLive(
    { events: name ?? '*' },
    {
      event: (event) => {
        const { time: at, type, tick, instance } = event;
        option(kindSelect, kinds, type.split('.')[0]);
        option(kindSelect, kinds, type);
        option(instanceSelect, instances, instance);
        if (FOLDED.has(type)) foldedLabel.textContent = `terminals waiting for input (${++folded.count})`;
        const tr = h(
          'tr',
          { 'data-type': type, 'data-instance': instance, title: JSON.stringify(event) },
          h('td', { class: 'nowrap muted' }, time(at)),
          name ? '' : h('td', {}, h('a', { href: href(instance, 'events') }, instance)),
          h('td', { class: 'nowrap' }, tick === undefined ? '' : h('a', { href: href(instance, 'tick', String(tick)) }, `#${tick}`)),
          h('td', { class: 'nowrap' }, h('span', { class: `badge kind-${type.split('.')[0]}` }, type)),
          h('td', { class: 'what' }, details(event).map((part) => (typeof part === 'string' && part ? h('span', {}, part) : part))),
        );
        rows.prepend(tr);
        apply();
        while (rows.children.length > MAX_ROWS) rows.lastChild.remove();
      },
    },
  );
}
