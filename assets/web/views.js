import { h, ago, duration, time } from './dom.js';
import { openLive } from './live.js';

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
    { class: `line ${item.kind} by-${item.who}${item.isError ? ' failed' : ''}`, 'data-index': item.index },
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
    h('span', { class: 'tool-calls' }, `${s.toolCalls} tool call${s.toolCalls === 1 ? '' : 's'}`),
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
