import { Terminal } from '/vendor/xterm.mjs';

// A terminal on the page shows what the agent's terminal printed. xterm.js answers some of what
// it is sent (where is the cursor, what terminal are you, what colours, what mode), and reports
// focus and the mouse when a program asks: sent on, those answers would be typed into the
// agent's terminal although no person typed. Here none is ever made, and with --write only
// what a person types or pastes is sent.

const swallow = () => true;
/** DECSET modes that make the terminal report focus or the mouse. */
const REPORTING_MODES = new Set([9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016]);

function neverAnswer(term) {
  const csi = (id) => term.parser.registerCsiHandler(id, swallow);
  csi({ final: 'n' }); // DSR, cursor position report
  csi({ prefix: '?', final: 'n' });
  csi({ final: 'c' }); // primary device attributes
  csi({ prefix: '>', final: 'c' }); // secondary
  csi({ prefix: '=', final: 'c' }); // tertiary
  csi({ intermediates: '$', final: 'p' }); // DECRQM
  csi({ prefix: '?', intermediates: '$', final: 'p' });
  csi({ prefix: '>', final: 'q' }); // XTVERSION
  csi({ prefix: '?', final: 'u' }); // keyboard protocol query
  csi({ final: 't' }); // window operations and reports
  term.parser.registerDcsHandler({ intermediates: '$', final: 'q' }, swallow); // DECRQSS
  term.parser.registerDcsHandler({ intermediates: '+', final: 'q' }, swallow); // XTGETTCAP
  // Colour queries (OSC 4, 10-19 with "?") and the clipboard (52, also a query) are never answered.
  for (const n of [4, 5, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]) term.parser.registerOscHandler(n, (data) => data.includes('?'));
  term.parser.registerOscHandler(52, swallow);
  for (const final of ['h', 'l']) {
    term.parser.registerCsiHandler({ prefix: '?', final }, (params) => {
      const modes = params.map((p) => (Array.isArray(p) ? p[0] : p));
      if (!modes.some((m) => REPORTING_MODES.has(m))) return false;
      const others = modes.filter((m) => !REPORTING_MODES.has(m));
      if (others.length) term.write(`\x1b[?${others.join(';')}${final}`);
      return true;
    });
  }
}

/** A terminal showing agent output; `onType` (with --write) gets only what a person types or pastes into it. */
export function agentTerminal(parent, options, onType) {
  const term = new Terminal({ allowProposedApi: true, disableStdin: !onType, scrollback: 2000, fontSize: 12, ...options });
  neverAnswer(term);
  term.open(parent);
  if (onType) {
    // Data xterm.js makes while a key, paste or composition event is being handled is a person's;
    // anything else it makes (an answer it was not stopped from giving) is dropped.
    let personUntil = 0;
    const person = () => {
      personUntil = performance.now() + 50;
    };
    term.onData((data) => {
      if (performance.now() <= personUntil) onType(data);
    });
    term.attachCustomKeyEventHandler(() => {
      person();
      return true;
    });
    term.textarea?.addEventListener('paste', person, true);
    term.textarea?.addEventListener('compositionend', person, true);
    term.textarea?.addEventListener('input', person, true);
  }
  return term;
}

/** Snapshots and output of one terminal from the stream into `term`. */
export function applyScreen(term, message) {
  term.reset();
  if (term.cols !== message.cols || term.rows !== message.rows) term.resize(message.cols, message.rows);
  term.write(message.data);
}

/** Find `text` in the terminal's lines (history included), from the line after `from`; selects it and scrolls there. */
export function findInTerminal(term, text, from, backwards = false) {
  if (!text) return undefined;
  const buffer = term.buffer.active;
  const total = buffer.length;
  const needle = text.toLowerCase();
  for (let step = 1; step <= total; step++) {
    const y = (from + (backwards ? -step : step) + total * 2) % total;
    const line = buffer.getLine(y)?.translateToString(true).toLowerCase() ?? '';
    const x = line.indexOf(needle);
    if (x >= 0) {
      term.select(x, y, text.length);
      term.scrollToLine(Math.max(0, y - Math.floor(term.rows / 2)));
      return y;
    }
  }
  return undefined;
}
