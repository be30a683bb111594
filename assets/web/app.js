import { h, getJson } from './dom.js';
import { overviewView } from './overview.js';
import { terminalView } from './terminal.js';
import { ticksView, transcriptView, recordingsView, replayView, eventsView } from './views.js';

const view = document.getElementById('view');
const crumbs = document.getElementById('crumbs');
let cleanup = () => {};
let config = { write: false };

function tabs(name, active) {
  const tab = (id, label) => h('a', { href: `#/i/${encodeURIComponent(name)}/${id}`, class: id === active ? 'tab active' : 'tab' }, label);
  return h('nav', { class: 'tabs' }, tab('terminals', 'Terminals'), tab('ticks', 'Ticks'), tab('recordings', 'Recordings'), tab('events', 'Events'));
}

async function route() {
  cleanup();
  cleanup = () => {};
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const body = h('div', {});
  view.replaceChildren(body);
  crumbs.replaceChildren();
  try {
    if (parts[0] === 'events') {
      cleanup = await eventsView(body, undefined);
      return;
    }
    if (parts[0] !== 'i' || !parts[1]) {
      cleanup = await overviewView(body, undefined);
      return;
    }
    const name = parts[1];
    const what = parts[2] ?? 'terminals';
    crumbs.replaceChildren(h('span', {}, ' / '), h('a', { href: `#/i/${encodeURIComponent(name)}/terminals` }, name));
    view.prepend(tabs(name, { tick: 'ticks', replay: 'recordings', tty: 'terminals' }[what] ?? what));
    if (what === 'terminals') cleanup = await overviewView(body, name);
    else if (what === 'tty') cleanup = await terminalView(body, name, Number(parts[3]), config);
    else if (what === 'ticks') cleanup = await ticksView(body, name);
    else if (what === 'tick') cleanup = await transcriptView(body, name, Number(parts[3]));
    else if (what === 'recordings') cleanup = await recordingsView(body, name);
    else if (what === 'replay') cleanup = await replayView(body, name, parts[3] ?? '');
    else if (what === 'events') cleanup = await eventsView(body, name);
    else body.append(h('p', { class: 'error' }, `Unknown page ${what}.`));
  } catch (error) {
    body.append(h('p', { class: 'error' }, String(error.message ?? error)));
  }
}

config = await getJson('/api/config').catch(() => config);
document.getElementById('mode').replaceChildren(h('a', { href: '#/events', class: 'muted' }, 'events'), ' ', h('span', { class: config.write ? 'badge warn' : 'badge' }, config.write ? 'write: people can type' : 'read-only'));
window.addEventListener('hashchange', route);
await route();
