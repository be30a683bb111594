import { Terminal } from '/vendor/xterm.mjs';
import { h, getJson, ago, duration, time, table } from './dom.js';

const api = (name, ...rest) => `/api/instances/${encodeURIComponent(name)}${rest.map((r) => `/${encodeURIComponent(r)}`).join('')}`;

/** Re-run `load` every `ms` while the view is shown. */
function every(ms, load) {
  const timer = setInterval(() => load().catch(() => {}), ms);
  return () => clearInterval(timer);
}

// ---------------------------------------------------------------- every instance

export async function instancesView(body) {
  const render = async () => {
    const instances = await getJson('/api/instances');
    const rows = instances.map((i) => {
      const state = i.paused ? h('span', { class: 'badge bad' }, 'paused') : h('span', { class: 'badge' }, i.state);
      const ctx = i.context ? `${Math.round((100 * i.context.used) / i.context.window)}% of ${Math.round(i.context.window / 1000)}k` : '';
      const current = i.currentTick ? `#${i.currentTick.number ?? '?'} for ${ago(i.currentTick.started)}${i.currentTick.trigger ? ` (${i.currentTick.trigger})` : ''}` : '-';
      const last = i.lastTick ? `#${i.lastTick.number ?? '?'} ${i.lastTick.status}` : '-';
      return h(
        'tr',
        { 'data-instance': i.name },
        h('td', {}, h('a', { href: `#/i/${encodeURIComponent(i.name)}/terminals` }, i.name)),
        h('td', {}, i.watch ? `running (pid ${i.watch.pid})` : 'not running'),
        h('td', { class: 'state' }, state, i.reason ? h('div', { class: 'reason' }, i.reason) : ''),
        h('td', {}, current),
        h('td', {}, ctx),
        h('td', {}, i.nextWake ?? '-'),
        h('td', {}, last, i.lastTick?.error ? h('div', { class: 'error' }, i.lastTick.error) : '', i.error ? h('div', { class: 'error' }, i.error) : ''),
        h('td', {}, String(i.inboxWaiting)),
      );
    });
    body.replaceChildren(
      h('h1', {}, 'Instances on this host'),
      instances.length === 0
        ? h('p', { class: 'muted' }, 'No instance is registered. Create one with kernel-runner init <name> <dir>.')
        : table(['Instance', 'Watch', 'State', 'Current tick', 'Context', 'Next wake', 'Last tick', 'Inbox'], rows),
    );
  };
  await render();
  return every(3000, render);
}

// ---------------------------------------------------------------- terminals, live

function terminalCard(name, info, config) {
  const title = h('div', { class: 'tty-title' });
  const screen = h('div', { class: 'tty-screen', 'data-tty': info.tty });
  const card = h('section', { class: 'tty' }, title, screen);
  const term = new Terminal({ cols: 120, rows: 40, disableStdin: !config.write, convertEol: false, scrollback: 5000, fontSize: 12 });
  term.open(screen);
  const update = (t) => {
    title.replaceChildren(
      h('strong', {}, `TTY ${t.tty}`),
      h('span', {}, `${t.program} · ${t.state}`),
      t.lastExitCode === undefined ? '' : h('span', { class: t.lastExitCode === 0 ? 'badge good exit' : 'badge bad exit' }, `exit ${t.lastExitCode}`),
      t.lastCommand ? h('code', { class: 'last', title: t.lastCommand }, t.lastCommand) : '',
      t.recording ? h('a', { href: `#/i/${encodeURIComponent(name)}/replay/${encodeURIComponent(t.recording)}`, class: 'replay' }, 'replay') : '',
    );
  };
  update(info);
  const source = new EventSource(api(name, 'terminals', String(info.tty), 'stream'));
  source.addEventListener('header', (e) => {
    const header = JSON.parse(e.data);
    term.reset();
    term.resize(header.width, header.height);
  });
  source.addEventListener('cast', (e) => {
    const [, code, data] = JSON.parse(e.data);
    if (code === 'o') term.write(data);
    else if (code === 'r') {
      const [cols, rows] = data.split('x').map(Number);
      if (cols > 0 && rows > 0) term.resize(cols, rows);
    }
  });
  if (config.write) {
    // One request at a time, in order: keys typed while one is on its way go together in the next.
    let queued = '';
    let sending = false;
    const flush = () => {
      if (sending || !queued) return;
      sending = true;
      const data = queued;
      queued = '';
      fetch(api(name, 'terminals', String(info.tty), 'input'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data }) })
        .catch(() => {})
        .finally(() => {
          sending = false;
          flush();
        });
    };
    term.onData((data) => {
      queued += data;
      flush();
    });
  }
  return { card, update, dispose: () => (source.close(), term.dispose()) };
}

export async function terminalsView(body, name, config) {
  const cards = new Map();
  const grid = h('div', { class: 'ttys' });
  body.replaceChildren(
    h('h1', {}, `${name}: terminals`),
    h('p', { class: 'muted' }, config.write ? 'Click a terminal and type: the agent is told at its next wait.' : 'Read-only. Start agent-kernel web --write to type into a terminal.'),
    grid,
  );
  const load = async () => {
    const terminals = await getJson(api(name, 'terminals'));
    for (const t of terminals) {
      let card = cards.get(t.tty);
      if (!card) {
        card = terminalCard(name, t, config);
        cards.set(t.tty, card);
        grid.append(card.card);
      }
      card.update(t);
    }
    for (const [tty, card] of cards) {
      if (terminals.some((t) => t.tty === tty)) continue;
      card.dispose();
      card.card.remove();
      cards.delete(tty);
    }
    if (terminals.length === 0 && !grid.querySelector('.muted')) grid.append(h('p', { class: 'muted' }, 'No terminal is open.'));
    if (terminals.length > 0) grid.querySelector(':scope > .muted')?.remove();
  };
  await load();
  const stop = every(2000, load);
  return () => {
    stop();
    for (const card of cards.values()) card.dispose();
  };
}

// ---------------------------------------------------------------- ticks and transcripts

export async function ticksView(body, name) {
  const ticks = await getJson(api(name, 'ticks'));
  const rows = ticks.map((t) =>
    h(
      'tr',
      {},
      h('td', {}, h('a', { href: `#/i/${encodeURIComponent(name)}/tick/${t.tick}` }, `#${t.tick}`)),
      h('td', {}, time(t.started)),
      h('td', {}, t.durationMs === undefined ? (t.status === 'running' ? `${ago(t.started)} so far` : '') : duration(t.durationMs)),
      h('td', {}, h('span', { class: t.status === 'ok' ? 'badge good' : t.status === 'running' ? 'badge' : 'badge bad' }, t.status), t.errorClass ? ` ${t.errorClass}` : '', t.error ? h('div', { class: 'error' }, t.error) : ''),
      h('td', {}, t.attempts === undefined ? '' : String(t.attempts)),
      h('td', {}, t.context ? `${Math.round(t.context.used / 1000)}k / ${Math.round(t.context.window / 1000)}k` : ''),
      h('td', {}, t.costUsd === undefined ? '' : `$${t.costUsd.toFixed(2)}`),
    ),
  );
  body.replaceChildren(
    h('h1', {}, `${name}: ticks`),
    ticks.length === 0 ? h('p', { class: 'muted' }, 'No tick has run yet.') : table(['Tick', 'Started', 'Duration', 'Outcome', 'Attempts', 'Context', 'Cost'], rows),
  );
  return () => {};
}

function transcriptItem(item) {
  switch (item.kind) {
    case 'session':
      return h('div', { class: 'item session' }, item.text);
    case 'text':
      return h('div', { class: 'item agent' }, h('div', { class: 'who' }, 'agent'), h('div', { class: 'text' }, item.text));
    case 'thinking':
      return h('details', { class: 'item thinking' }, h('summary', {}, 'thinking'), h('pre', {}, item.text));
    case 'tool': {
      const short = item.input.replace(/\s+/g, ' ').slice(0, 120);
      return h(
        'div',
        { class: `item tool${item.isError ? ' failed' : ''}` },
        h('div', { class: 'call' }, h('span', { class: 'tool-name' }, item.name.replace(/^mcp__[^_]+(?:_[^_]+)*?__/, '')), h('code', {}, short)),
        h('details', {}, h('summary', {}, 'arguments'), h('pre', {}, item.input)),
        item.result === undefined ? h('div', { class: 'muted' }, 'no result') : h('details', {}, h('summary', {}, item.isError ? 'error result' : 'result'), h('pre', {}, item.result)),
      );
    }
    case 'runner':
      return h('div', { class: 'item runner' }, h('span', { class: 'badge' }, item.event), ' ', h('code', {}, item.text));
    case 'error':
      return h('div', { class: 'item error' }, item.text);
    case 'result':
      return h(
        'div',
        { class: `item result${item.isError ? ' failed' : ''}` },
        h('div', { class: 'who' }, item.isError ? 'ended with an error' : 'result'),
        h('div', { class: 'text' }, item.text),
        item.costUsd === undefined ? '' : h('div', { class: 'muted' }, `cost $${item.costUsd.toFixed(4)}${item.durationMs ? `, ${duration(item.durationMs)}` : ''}`),
      );
    default:
      return h('div', { class: 'item' }, JSON.stringify(item));
  }
}

export async function transcriptView(body, name, tick) {
  const items = await getJson(api(name, 'ticks', String(tick), 'transcript'));
  body.replaceChildren(h('h1', {}, `${name}: tick #${tick}`), h('div', { class: 'transcript' }, items.map(transcriptItem)));
  return () => {};
}

// ---------------------------------------------------------------- recordings

export async function recordingsView(body, name) {
  const recordings = await getJson(api(name, 'recordings'));
  const rows = recordings.map((r) =>
    h('tr', {}, h('td', {}, `#${r.tick}`), h('td', {}, `TTY ${r.tty}`), h('td', {}, `${Math.ceil(r.size / 1024)} KiB`), h('td', {}, h('a', { href: `#/i/${encodeURIComponent(name)}/replay/${encodeURIComponent(r.file)}` }, 'replay'))),
  );
  body.replaceChildren(h('h1', {}, `${name}: recordings`), recordings.length === 0 ? h('p', { class: 'muted' }, 'No recording yet.') : table(['Tick', 'Terminal', 'Size', ''], rows));
  return () => {};
}

export async function replayView(body, name, file) {
  const { create } = await import('/vendor/asciinema-player/index.js');
  const markers = await getJson(api(name, 'recordings', file, 'markers'));
  const stage = h('div', { class: 'player' });
  const commands = markers.filter((m) => m.label.startsWith('$ '));
  let player;
  const list = h(
    'ol',
    { class: 'commands' },
    commands.map((m) => {
      const end = markers.find((x) => x.time >= m.time && x.label.startsWith('exit '));
      return h('li', {}, h('button', { type: 'button', onclick: () => (player.seek(m.time), player.play()) }, h('code', {}, m.label.slice(2))), h('span', { class: 'muted' }, ` ${m.time.toFixed(1)}s${end ? ` · ${end.label}` : ''}`));
    }),
  );
  body.replaceChildren(h('h1', {}, `${name}: ${file}`), h('div', { class: 'replay' }, stage, h('aside', {}, h('h2', {}, 'Commands'), commands.length ? list : h('p', { class: 'muted' }, 'No command marks.'))));
  player = create(api(name, 'recordings', file), stage, { fit: 'width', idleTimeLimit: 2, markers: commands.map((m) => [m.time, m.label.slice(2)]) });
  return () => player.dispose();
}

// ---------------------------------------------------------------- events

export async function eventsView(body, name) {
  const list = h('ol', { class: 'events', reversed: true });
  body.replaceChildren(h('h1', {}, `${name}: events`), h('p', { class: 'muted' }, `Also: agent-kernel events ${name} --follow | jq`), list);
  const source = new EventSource(api(name, 'events'));
  source.addEventListener('event', (e) => {
    const event = JSON.parse(e.data);
    const { time: at, type, tick, ...rest } = event;
    list.prepend(h('li', {}, h('span', { class: 'muted' }, time(at)), ' ', h('span', { class: 'badge' }, type), tick === undefined ? '' : ` tick ${tick} `, h('code', {}, JSON.stringify(rest))));
  });
  return () => source.close();
}
