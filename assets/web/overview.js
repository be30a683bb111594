import { h, ago, duration } from './dom.js';
import { openLive } from './live.js';
import { agentTerminal, applyScreen } from './screen.js';

const href = (name, ...rest) => `#/i/${[name, ...rest].map(encodeURIComponent).join('/')}`;

/** The state badge of a terminal: running (what), waiting for input (which program), exit N, exited. */
export function stateBadge(t) {
  if (t.state === 'exited') return h('span', { class: 'badge bad state' }, `exited${t.exitCode === undefined ? '' : ` ${t.exitCode}`}`);
  if (t.state === 'waiting') return h('span', { class: 'badge warn state' }, `waiting for input`);
  if (t.state === 'running') return h('span', { class: 'badge run state' }, `running ${ago(t.since)}`);
  if (t.lastExitCode !== undefined) return h('span', { class: t.lastExitCode === 0 ? 'badge good state' : 'badge bad state' }, `exit ${t.lastExitCode}`);
  return h('span', { class: 'badge state' }, 'idle');
}

export function doingLine(t) {
  if (t.doing) return t.state === 'waiting' ? `${t.doing} waits for input` : `$ ${t.doing}`;
  if (t.lastCommand) return `$ ${t.lastCommand}${t.lastDurationMs === undefined ? '' : ` (${duration(t.lastDurationMs)})`}`;
  return t.program;
}

function instanceCard(i) {
  const state = i.paused ? h('span', { class: 'badge bad' }, 'paused') : h('span', { class: i.state === 'ticking' ? 'badge run' : 'badge' }, i.state);
  const ctx = i.context ? `${Math.round((100 * i.context.used) / i.context.window)}% of ${Math.round(i.context.window / 1000)}k` : '';
  return h(
    'section',
    { class: 'instance', 'data-instance': i.name },
    h('div', { class: 'instance-head' }, h('a', { href: href(i.name, 'terminals'), class: 'name' }, i.name), state),
    i.reason ? h('div', { class: 'reason' }, i.reason) : '',
    h(
      'dl',
      {},
      h('dt', {}, 'watch'),
      h('dd', {}, i.watch ? `running (pid ${i.watch.pid})` : 'not running'),
      h('dt', {}, 'kernel'),
      h('dd', { class: 'kernel' }, i.kernel ?? 'not running'),
      h('dt', {}, 'tick'),
      h('dd', {}, i.currentTick ? `#${i.currentTick.number ?? '?'} for ${ago(i.currentTick.started)}${i.currentTick.trigger ? ` (${i.currentTick.trigger})` : ''}${ctx ? `, context ${ctx}` : ''}` : '-'),
      h('dt', {}, 'last'),
      // The last tick's error is said once: in the reason above when that is what paused the instance.
      h('dd', {}, i.lastTick ? h('a', { href: href(i.name, 'tick', String(i.lastTick.number ?? '')) }, `#${i.lastTick.number ?? '?'} ${i.lastTick.status}`) : '-', i.lastTick?.error && i.lastTick.error !== i.reason ? h('div', { class: 'error' }, i.lastTick.error) : ''),
      h('dt', {}, 'next wake'),
      h('dd', {}, i.nextWake ?? '-'),
      h('dt', {}, 'inbox'),
      h('dd', {}, String(i.inboxWaiting)),
    ),
    i.error ? h('div', { class: 'error' }, i.error) : '',
    h('nav', { class: 'links' }, ['terminals', 'ticks', 'recordings', 'events', 'mail'].map((v) => h('a', { href: href(i.name, v) }, v))),
  );
}

/** A live thumbnail of one terminal: its screen scaled to the card, its state; a click opens it large. */
function thumbnail(t) {
  const title = h('div', { class: 'card-title' });
  const screen = h('div', { class: 'thumb-screen' });
  const frame = h('div', { class: 'thumb-frame' }, screen);
  const card = h('a', { class: 'card', href: href(t.instance, 'tty', String(t.tty)), 'data-id': `${t.instance}/${t.tty}`, title: 'Open full size' }, title, frame, h('div', { class: 'card-foot' }));
  const term = agentTerminal(screen, { cols: 120, rows: 40, fontSize: 12, scrollback: 0, cursorBlink: false });
  // xterm.js draws a terminal only while it is on screen; its buffer is always current (tests read it).
  card.terminal = term;
  const fit = () => {
    const inner = screen.querySelector('.xterm-screen');
    if (!inner || !inner.offsetWidth) return;
    const scale = Math.min(1, frame.clientWidth / inner.offsetWidth);
    screen.style.transform = `scale(${scale})`;
    frame.style.height = `${Math.ceil(inner.offsetHeight * scale)}px`;
  };
  const observer = new ResizeObserver(fit);
  observer.observe(frame);
  const update = (info) => {
    title.replaceChildren(h('strong', {}, `${info.instance} · TTY ${info.tty}`), stateBadge(info), info.unseen ? h('span', { class: 'badge dim', title: 'output the agent has not seen yet' }, 'unseen') : '');
    card.querySelector('.card-foot').replaceChildren(h('code', { class: 'doing', title: doingLine(info) }, doingLine(info)));
  };
  update(t);
  return {
    card,
    update,
    screen: (m) => {
      applyScreen(term, m);
      requestAnimationFrame(fit);
    },
    out: (m) => term.write(m.data),
    size: (m) => {
      term.resize(m.cols, m.rows);
      requestAnimationFrame(fit);
    },
    dispose: () => {
      observer.disconnect();
      term.dispose();
    },
  };
}

/** Every terminal of every instance (or of one), live; instances above when showing all. */
export async function overviewView(body, only) {
  const cards = new Map();
  const lists = new Map();
  const grid = h('div', { class: 'grid' });
  const instances = h('div', { class: 'instances' });
  const sizes = { S: '13rem', M: '18rem', L: '30rem' };
  const size = localStorage.getItem('ak-thumb') ?? 'M';
  grid.style.setProperty('--thumb', sizes[size] ?? sizes.M);
  const sizer = h(
    'span',
    { class: 'sizer' },
    'size ',
    Object.keys(sizes).map((k) =>
      h('button', { type: 'button', class: k === size ? 'on' : '', onclick: (e) => {
        localStorage.setItem('ak-thumb', k);
        grid.style.setProperty('--thumb', sizes[k]);
        for (const b of e.target.parentNode.querySelectorAll('button')) b.classList.toggle('on', b === e.target);
      } }, k),
    ),
  );
  const empty = h('p', { class: 'muted empty' }, 'No terminal is open.');
  body.replaceChildren(
    only ? '' : h('h1', {}, 'Instances'),
    only ? '' : instances,
    h('div', { class: 'grid-head' }, h('h1', {}, only ? `${only}: terminals` : 'Terminals'), sizer),
    grid,
    empty,
  );
  const render = () => {
    const all = [...lists.values()].flat();
    for (const t of all) {
      const id = `${t.instance}/${t.tty}`;
      let card = cards.get(id);
      if (!card) {
        card = thumbnail(t);
        cards.set(id, card);
      }
      card.update(t);
    }
    for (const [id, card] of cards) {
      if (all.some((t) => `${t.instance}/${t.tty}` === id)) continue;
      card.dispose();
      card.card.remove();
      cards.delete(id);
    }
    grid.replaceChildren(...all.map((t) => cards.get(`${t.instance}/${t.tty}`).card));
    empty.hidden = all.length > 0;
  };
  const close = openLive(
    { instances: only ? undefined : '1', terminals: only ?? '*' },
    {
      instances: (list) => instances.replaceChildren(...(list.length ? list.map(instanceCard) : [h('p', { class: 'muted' }, 'No instance is registered. Create one with kernel-runner init <name> <dir>.')])),
      terminals: (m) => {
        lists.set(m.instance, m.terminals);
        render();
      },
      screen: (m) => cards.get(m.id)?.screen(m),
      out: (m) => cards.get(m.id)?.out(m),
      size: (m) => cards.get(m.id)?.size(m),
    },
  );
  return () => {
    close();
    for (const card of cards.values()) card.dispose();
  };
}
