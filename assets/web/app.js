import { h, getJson } from './dom.js';
import { overviewView } from './overview.js';
import { terminalView } from './terminal.js';
import { ticksView, transcriptView } from './views.js';
import { recordingsView, replayView } from './recordings.js';
import { eventsView } from './events.js';
import { mailView } from './mail.js';

const view = document.getElementById('view');
const crumbs = document.getElementById('crumbs');
let cleanup = () => {};
let config = { write: false };

function tabs(name, active) {
  const tab = (id, label) => h('a', { href: `#/i/${encodeURIComponent(name)}/${id}`, class: id === active ? 'tab active' : 'tab' }, label);
  return h('nav', { class: 'tabs' }, tab('terminals', 'Terminals'), tab('ticks', 'Ticks'), tab('recordings', 'Recordings'), tab('events', 'Events'), tab('mail', 'Mail'));
}

/** A page for an instance this host does not have: what to do instead of an empty page. */
function unknownInstance(name, known) {
  return h(
    'section',
    { class: 'unknown' },
    h('h1', {}, `No instance named “${name}”`),
    h('p', {}, `No instance of that name is registered on this host (kernel-runner ls lists them; kernel-runner init ${name} <dir> makes one).`),
    known.length ? h('p', {}, 'Instances here: ', known.map((n, i) => [i ? ', ' : '', h('a', { href: `#/i/${encodeURIComponent(n)}/terminals` }, n)])) : h('p', { class: 'muted' }, 'This host has no instance yet.'),
    h('p', {}, h('a', { href: '#/' }, 'Back to the overview')),
  );
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
    const known = await fetch(`/api/instances/${encodeURIComponent(name)}`, { credentials: 'same-origin' });
    if (known.status === 404) {
      body.append(unknownInstance(name, (await known.json().catch(() => ({}))).known ?? []));
      return;
    }
    crumbs.replaceChildren(h('span', {}, ' / '), h('a', { href: `#/i/${encodeURIComponent(name)}/terminals` }, name));
    view.prepend(tabs(name, { tick: 'ticks', replay: 'recordings', tty: 'terminals' }[what] ?? what));
    if (what === 'terminals') cleanup = await overviewView(body, name);
    else if (what === 'tty') cleanup = await terminalView(body, name, Number(parts[3]), config);
    else if (what === 'ticks') cleanup = await ticksView(body, name);
    else if (what === 'tick') cleanup = await transcriptView(body, name, Number(parts[3]));
    else if (what === 'recordings') cleanup = await recordingsView(body, name);
    else if (what === 'replay') cleanup = await replayView(body, name, parts[3] ?? '');
    else if (what === 'events') cleanup = await eventsView(body, name);
    else if (what === 'mail') cleanup = await mailView(body, name, config);
    else body.append(h('p', { class: 'error' }, `Unknown page ${what}.`));
  } catch (error) {
    body.append(h('p', { class: 'error' }, String(error.message ?? error)));
  }
}

config = await getJson('/api/config').catch(() => config);
document.getElementById('mode').replaceChildren(h('a', { href: '#/events', class: 'muted' }, 'events'), ' ', h('span', { class: config.write ? 'badge warn' : 'badge' }, config.write ? 'write: people can type' : 'read-only'));
window.addEventListener('hashchange', route);
await route();
