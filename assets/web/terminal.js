import { h } from './dom.js';
import { openLive } from './live.js';
import { doingLine, stateBadge } from './overview.js';
import { agentTerminal, applyScreen, findInTerminal } from './screen.js';

const api = (name, ...rest) => `/api/instances/${[name, ...rest].map(encodeURIComponent).join('/')}`;

/** One terminal full size: live, with its history, font size, fullscreen and search; typing with --write. */
export async function terminalView(body, name, tty, config) {
  const title = h('div', { class: 'focus-title' });
  const screen = h('div', { class: 'focus-screen', 'data-tty': tty });
  const stage = h('section', { class: 'focus' }, title, screen);
  let fontSize = Number(localStorage.getItem('ak-font') ?? 14);
  // With --write, a person's keys go to the terminal one request at a time, in order.
  let queued = '';
  let sending = false;
  const flush = () => {
    if (sending || !queued) return;
    sending = true;
    const data = queued;
    queued = '';
    fetch(api(name, 'terminals', String(tty), 'input'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data }) })
      .catch(() => {})
      .finally(() => {
        sending = false;
        flush();
      });
  };
  const onType = config.write
    ? (data) => {
        queued += data;
        flush();
      }
    : undefined;
  body.replaceChildren(stage);
  const term = agentTerminal(screen, { cols: 120, rows: 40, fontSize, scrollback: 2000 }, onType);
  // As the overview's cards: the screen's terminal, for whoever reads the page (tests).
  screen.terminal = term;
  let found = -1;
  const search = h('input', { type: 'search', placeholder: 'search the history', class: 'search' });
  const hits = h('span', { class: 'muted hits' });
  const find = (backwards) => {
    const at = findInTerminal(term, search.value, found < 0 ? term.buffer.active.length - 1 : found, backwards);
    hits.textContent = search.value && at === undefined ? 'not found' : '';
    if (at !== undefined) found = at;
  };
  search.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') find(e.shiftKey ? false : true);
  });
  search.addEventListener('input', () => {
    found = -1;
    find(true);
  });
  const font = (delta) => {
    fontSize = Math.max(6, Math.min(28, fontSize + delta));
    localStorage.setItem('ak-font', String(fontSize));
    term.options.fontSize = fontSize;
  };
  const tools = h(
    'div',
    { class: 'tools' },
    h('button', { type: 'button', title: 'smaller', onclick: () => font(-1) }, 'A−'),
    h('button', { type: 'button', title: 'larger', onclick: () => font(1) }, 'A+'),
    h('button', { type: 'button', onclick: () => (document.fullscreenElement ? document.exitFullscreen() : stage.requestFullscreen()) }, 'fullscreen'),
    search,
    h('button', { type: 'button', title: 'older (Enter)', onclick: () => find(true) }, '↑'),
    h('button', { type: 'button', title: 'newer (Shift+Enter)', onclick: () => find(false) }, '↓'),
    hits,
  );
  const update = (t) => {
    title.replaceChildren(
      h('a', { href: `#/i/${encodeURIComponent(name)}/terminals` }, '← all terminals'),
      h('strong', {}, `${name} · TTY ${tty}`),
      t ? stateBadge(t) : h('span', { class: 'badge bad' }, 'closed'),
      t ? h('code', { class: 'doing' }, doingLine(t)) : '',
      t ? '' : h('span', { class: 'muted' }, 'not open now: its past is in ', h('a', { href: `#/i/${encodeURIComponent(name)}/recordings` }, 'recordings')),
      t?.recording ? h('a', { href: `#/i/${encodeURIComponent(name)}/replay/${encodeURIComponent(t.recording)}` }, 'replay') : '',
      h('span', { class: 'muted mode' }, config.write ? 'click and type: the agent is told' : 'read-only'),
    );
  };
  stage.insertBefore(tools, screen);
  update(undefined);
  const id = `${name}/${tty}`;
  const close = openLive(
    { focus: id },
    {
      terminals: (m) => {
        if (m.instance === name) update(m.terminals.find((t) => t.tty === tty));
      },
      screen: (m) => m.id === id && applyScreen(term, m),
      out: (m) => m.id === id && term.write(m.data),
      size: (m) => m.id === id && term.resize(m.cols, m.rows),
    },
  );
  return () => {
    close();
    term.dispose();
  };
}
