import { h, getJson, ago, duration, time, table } from './dom.js';
import { openLive } from './live.js';

const api = (name, ...rest) => `/api/instances/${[name, ...rest].map(encodeURIComponent).join('/')}`;
const href = (name, ...rest) => `#/i/${[name, ...rest].map(encodeURIComponent).join('/')}`;

function kilo(n) {
  return n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function tokensText(t) {
  if (!t) return '';
  return `${kilo(t.input + t.cacheRead + t.cacheCreation)} in · ${kilo(t.output)} out`;
}

function statusBadge(status, errorClass) {
  const cls = status === 'ok' ? 'badge good' : status === 'running' ? 'badge run' : status === 'interrupted' ? 'badge warn' : 'badge bad';
  return h('span', { class: cls }, errorClass ? `${status} (${errorClass})` : status);
}

// ---------------------------------------------------------------- ticks, like a CI run list

export async function ticksView(body, name) {
  const list = h('div', { class: 'runs' });
  body.replaceChildren(h('h1', {}, `${name}: ticks`), list);
  return openLive(
    { ticks: name },
    {
      ticks: (m) => {
        list.replaceChildren(
          ...(m.ticks.length === 0
            ? [h('p', { class: 'muted' }, 'No tick has run yet.')]
            : m.ticks.map((t) =>
                h(
                  'a',
                  { class: `run ${t.status}`, href: href(name, 'tick', String(t.tick)), 'data-tick': t.tick },
                  h('div', { class: 'run-head' }, statusBadge(t.status, t.errorClass), h('strong', {}, `#${t.tick}`), h('span', { class: 'muted' }, t.trigger ? `by ${t.trigger}` : ''), h('span', { class: 'muted' }, time(t.started))),
                  h('div', { class: t.status === 'ok' || t.status === 'running' ? 'run-result' : 'run-result error' }, t.error ?? t.result ?? (t.status === 'running' ? 'running…' : '')),
                  h(
                    'div',
                    { class: 'run-facts muted' },
                    h('span', {}, t.durationMs === undefined ? (t.status === 'running' ? `${ago(t.started)} so far` : '') : duration(t.durationMs)),
                    h('span', {}, tokensText(t.tokens)),
                    h('span', {}, t.context ? `context ${kilo(t.context.used)} / ${kilo(t.context.window)}` : ''),
                    h('span', {}, t.costUsd === undefined ? '' : `$${t.costUsd.toFixed(2)}`),
                    h('span', {}, t.attempts > 1 ? `${t.attempts} attempts` : ''),
                  ),
                ),
              )),
        );
      },
    },
  );
}

// ---------------------------------------------------------------- a transcript, like a CI log

const WHO = { agent: 'agent', harness: 'harness', hook: 'hook', runner: 'runner', operator: 'operator', peer: 'other agent' };

function clock(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour12: false });
}

function transcriptItem(item) {
  const head = [h('span', { class: 'at muted' }, clock(item.at)), h('span', { class: `who who-${item.who}` }, WHO[item.who] ?? item.who)];
  if (item.kind === 'tool') {
    const t = item.tool;
    return h(
      'details',
      { class: `line tool${t.isError ? ' failed' : ''}`, 'data-index': item.index },
      h('summary', {}, ...head, h('span', { class: 'tool-name' }, t.name), h('code', { class: 'summary' }, item.title.slice(t.name.length).trim()), h('span', { class: t.isError ? 'error result-line' : 'muted result-line' }, t.resultLine === undefined ? '…' : `→ ${t.resultLine}`)),
      h('div', { class: 'body' }, h('div', { class: 'label' }, 'arguments'), h('pre', {}, t.input), h('div', { class: 'label' }, t.isError ? 'error' : 'result'), h('pre', {}, t.result ?? '(no result yet)')),
    );
  }
  if (item.kind === 'thinking') return h('details', { class: 'line thinking', 'data-index': item.index }, h('summary', {}, ...head, h('span', { class: 'muted' }, 'thinking')), h('pre', {}, item.text));
  const long = item.text.length > 600 || item.text.split('\n').length > 12;
  const text = h('div', { class: 'text' }, item.text);
  return h(
    'div',
    { class: `line ${item.kind} by-${item.who}`, 'data-index': item.index },
    h('div', { class: 'line-head' }, ...head, item.title ? h('span', { class: 'title' }, item.title) : ''),
    long && (item.kind === 'prompt' || item.kind === 'note') ? h('details', {}, h('summary', { class: 'muted' }, item.text.split('\n')[0].slice(0, 120)), text) : text,
  );
}

function summaryBar(name, tick, s, row) {
  return h(
    'div',
    { class: 'summary-bar' },
    row ? statusBadge(row.status, row.errorClass) : '',
    h('strong', {}, `${name} · tick #${tick}`),
    s.trigger ? h('span', {}, `by ${s.trigger}`) : '',
    h('span', {}, s.started ? time(s.started) : ''),
    h('span', {}, s.started && s.ended ? duration(Date.parse(s.ended) - Date.parse(s.started)) : ''),
    h('span', {}, `${s.toolCalls} tool calls`),
    h('span', {}, tokensText(s.tokens)),
    h('span', {}, `$${(s.costUsd ?? 0).toFixed(4)}`),
    s.model ? h('span', { class: 'muted' }, s.model) : '',
    s.result ? h('div', { class: s.result.isError ? 'error result' : 'result' }, s.result.text) : '',
  );
}

export async function transcriptView(body, name, tick) {
  const header = h('div', {});
  const log = h('div', { class: 'log' });
  const filter = h('label', { class: 'muted' }, h('input', { type: 'checkbox', onchange: (e) => log.classList.toggle('agent-only', e.target.checked) }), ' agent words only');
  const expand = h('button', { type: 'button', onclick: () => log.querySelectorAll('details').forEach((d) => (d.open = !d.open)) }, 'expand / collapse all');
  body.replaceChildren(header, h('div', { class: 'log-tools' }, filter, expand), log);
  let row;
  let summary;
  const rendered = new Map();
  const closeLive = openLive(
    { transcript: `${name}/${tick}`, ticks: name },
    {
      ticks: (m) => {
        row = m.ticks.find((t) => t.tick === tick);
        if (summary) header.replaceChildren(summaryBar(name, tick, summary, row));
      },
      transcript: (m) => {
        if (m.missing) {
          log.replaceChildren(h('p', { class: 'muted' }, `Tick ${tick} has no transcript (yet).`));
          return;
        }
        summary = m.summary;
        header.replaceChildren(summaryBar(name, tick, summary, row));
        const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
        for (const item of m.items) {
          const el = transcriptItem(item);
          const old = rendered.get(item.index);
          if (old) {
            if (old.open) el.open = true;
            old.replaceWith(el);
          } else log.append(el);
          rendered.set(item.index, el);
        }
        if (atBottom && rendered.size > m.items.length) window.scrollTo(0, document.body.scrollHeight);
      },
    },
  );
  return closeLive;
}

// ---------------------------------------------------------------- recordings and replay

export async function recordingsView(body, name) {
  const recordings = await getJson(api(name, 'recordings'));
  const rows = recordings.map((r) =>
    h(
      'tr',
      {},
      h('td', {}, h('a', { href: href(name, 'replay', r.file) }, `TTY ${r.tty}${r.part > 1 ? ` (${r.part})` : ''}`)),
      h('td', {}, h('a', { href: href(name, 'tick', String(r.tick)) }, `#${r.tick}`)),
      h('td', {}, r.started ? time(r.started) : ''),
      h('td', {}, duration(r.durationS * 1000)),
      h('td', { class: 'commands-cell' }, r.commandCount === 0 ? h('span', { class: 'muted' }, 'no command') : [r.commands.slice(0, 3).map((c) => h('code', {}, c)), r.commandCount > 3 ? h('span', { class: 'muted' }, ` +${r.commandCount - 3} more`) : '']),
      h('td', { class: 'muted' }, `${Math.ceil(r.size / 1024)} KiB`),
    ),
  );
  body.replaceChildren(
    h('h1', {}, `${name}: recordings`),
    h('p', { class: 'muted' }, `In a terminal: agent-kernel play ${name} <file> (filtered like attach; a raw asciinema play passes the agent's clipboard writes and titles to your terminal).`),
    recordings.length === 0 ? h('p', { class: 'muted' }, 'No recording yet.') : table(['Terminal', 'Tick', 'Started', 'Length', 'Commands', 'Size'], rows),
  );
  return () => {};
}

export async function replayView(body, name, file) {
  const { create } = await import('/vendor/asciinema-player/index.js');
  const markers = await getJson(api(name, 'recordings', file, 'markers'));
  const stage = h('div', { class: 'player' });
  let player;
  // The player's markers are the recording's own, in its order: a command is marker number i.
  const items = markers.map((m, i) => ({ ...m, i })).filter((m) => m.label.startsWith('$ '));
  const list = h(
    'ol',
    { class: 'commands' },
    items.map((m) => {
      const end = markers.slice(m.i + 1).find((x) => x.label.startsWith('exit ') || x.label.startsWith('$ '));
      return h(
        'li',
        { 'data-marker': m.i },
        h('button', { type: 'button', onclick: () => (player.seek({ marker: m.i }), player.play()) }, h('span', { class: 'at muted' }, duration(m.time * 1000) || '0s'), h('code', {}, m.label.slice(2)), end?.label.startsWith('exit ') ? h('span', { class: /^exit 0\b/.test(end.label) ? 'muted' : 'error' }, end.label.replace(/ after \d+ ms$/, '')) : ''),
      );
    }),
  );
  body.replaceChildren(h('h1', {}, `${name}: ${file}`), h('div', { class: 'replay' }, stage, h('aside', {}, h('h2', {}, 'Commands'), items.length ? list : h('p', { class: 'muted' }, 'No command marks.'))));
  player = create(api(name, 'recordings', file), stage, { fit: 'width', idleTimeLimit: 2, terminalFontFamily: 'monospace', preload: true });
  return () => player.dispose();
}

// ---------------------------------------------------------------- events, filterable

export async function eventsView(body, name) {
  const list = h('ol', { class: 'events', reversed: true });
  const kinds = new Set();
  const instances = new Set();
  const kindSelect = h('select', { onchange: () => apply() }, h('option', { value: '' }, 'every kind'));
  const instanceSelect = h('select', { onchange: () => apply() }, h('option', { value: '' }, 'every instance'));
  const apply = () => {
    for (const li of list.children) li.hidden = (kindSelect.value && !li.dataset.type.startsWith(kindSelect.value)) || (instanceSelect.value && li.dataset.instance !== instanceSelect.value);
  };
  const option = (select, set, value) => {
    if (set.has(value)) return;
    set.add(value);
    select.append(h('option', { value }, value));
  };
  body.replaceChildren(h('h1', {}, name ? `${name}: events` : 'Events'), h('div', { class: 'filters' }, kindSelect, instanceSelect, h('span', { class: 'muted' }, `Also: agent-kernel events ${name ?? '<name>'} --follow`)), list);
  return openLive(
    { events: name ?? '*' },
    {
      event: (event) => {
        const { time: at, type, tick, instance, ...rest } = event;
        option(kindSelect, kinds, type.split('.')[0]);
        option(kindSelect, kinds, type);
        option(instanceSelect, instances, instance);
        const text = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ');
        const li = h('li', { 'data-type': type, 'data-instance': instance }, h('span', { class: 'muted' }, time(at)), h('span', { class: 'badge' }, type), h('span', { class: 'muted' }, instance), tick === undefined ? '' : h('span', {}, `tick ${tick}`), h('code', {}, text));
        list.prepend(li);
        apply();
        while (list.children.length > 2000) list.lastChild.remove();
      },
    },
  );
}
