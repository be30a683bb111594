import { h, getJson, time } from './dom.js';

const api = (name, ...rest) => `/api/instances/${[name, ...rest].map(encodeURIComponent).join('/')}`;

/** queued | delivered | withdrawn | kept | unknown: the class of a message's status. */
function statusClass(status) {
  if (status.startsWith('queued')) return 'badge warn';
  if (status.startsWith('delivered')) return 'badge good';
  if (status.startsWith('withdrawn')) return 'badge dim';
  return 'badge';
}

function excerpt(text) {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 140 ? `${flat.slice(0, 140)}…` : flat;
}

/** The post office of one instance: what waits for its model, what it had, what it sent. */
export async function mailView(body, name, config) {
  const note = h('p', { class: 'muted', role: 'status' });
  const holder = h('div', {});
  const render = async () => {
    const lines = await getJson(api(name, 'mail'));
    const received = lines.filter((l) => l.to === name);
    const queued = received.filter((l) => l.status.startsWith('queued'));
    const withdraw = async (line, button) => {
      if (!confirm(`Withdraw message ${line.id} from ${line.from}? ${name}'s model will not get it.`)) return;
      button.disabled = true;
      const res = await fetch(api(name, 'mail', line.id, 'withdraw'), { method: 'POST', credentials: 'same-origin' });
      const answer = await res.json().catch(() => ({ error: res.statusText }));
      note.textContent = res.ok ? `Withdrew ${line.id}: it is kept on the host, and ${name}'s model will not get it.` : answer.error;
      note.className = res.ok ? 'muted' : 'error';
      await render();
    };
    const rows = [...lines].reverse().map((l) => {
      const mine = l.to === name;
      const canWithdraw = mine && l.status.startsWith('queued');
      const action = !canWithdraw
        ? ''
        : config.write
          ? h('button', { type: 'button', class: 'withdraw', onclick: (e) => withdraw(l, e.currentTarget) }, 'Withdraw')
          : h('span', { class: 'muted', title: 'Start agent-kernel web --write to withdraw from here' }, 'read-only');
      return h(
        'tr',
        { 'data-id': l.id, class: mine ? 'in' : 'out' },
        h('td', { class: 'nowrap muted' }, time(l.sent)),
        h('td', { class: 'nowrap' }, mine ? h('span', {}, h('strong', {}, l.from), ' → ', l.to) : h('span', {}, l.from, ' → ', h('strong', {}, l.to))),
        h('td', { class: 'nowrap muted' }, l.replyTo ? `answers ${l.replyTo}` : l.asks ? 'asks' : 'says'),
        h('td', { class: 'message' }, h('details', {}, h('summary', {}, excerpt(l.text)), h('pre', {}, l.text)), h('code', { class: 'muted' }, l.id)),
        h('td', {}, h('span', { class: statusClass(l.status) }, l.status)),
        h('td', { class: 'nowrap' }, action),
      );
    });
    holder.replaceChildren(
      h(
        'p',
        { class: 'mail-facts' },
        h('strong', {}, `${queued.length} waiting for ${name}'s model`),
        h('span', { class: 'muted' }, `${received.length - queued.length} received before`),
        h('span', { class: 'muted' }, `${lines.length - received.length} sent by ${name}`),
      ),
      lines.length === 0
        ? h('p', { class: 'muted' }, `No message yet. kernel-runner send ${name} "text" puts one in its queue; the agent sends with ak-mail in a terminal.`)
        : h('table', { class: 'mail' }, h('thead', {}, h('tr', {}, ['Sent', 'From → to', '', 'Message', 'Status', ''].map((x) => h('th', {}, x)))), h('tbody', {}, rows)),
    );
  };
  body.replaceChildren(
    h('h1', {}, `${name}: mail`),
    h('p', { class: 'muted' }, `The post office: messages for ${name} wait in its queue until its model has them in a tick; what it sends goes out through its outbox. Newest first. Also: kernel-runner mail ${name}.`),
    note,
    holder,
  );
  await render();
  return () => {};
}
