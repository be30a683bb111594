import { describe, expect, it } from 'vitest';
import { AgentRole } from '../../../../src/server/terminals/agent-role.js';

function roleWithClock(idleMs = 1000) {
  const clock = { now: 0 };
  return { role: new AgentRole(idleMs, () => clock.now), clock };
}

describe('AgentRole', () => {
  it('goes to the first session; a second one observes until the first ends', () => {
    const { role } = roleWithClock();
    const agent = {};
    const person = {};
    expect(role.claim(agent, false)).toBe(true);
    expect(role.claim(person, false)).toBe(false);
    role.release(agent);
    expect(role.claim(person, false)).toBe(true);
  });

  it('passes from a holder that has been idle (a client gone without ending its session)', () => {
    const { role, clock } = roleWithClock(1000);
    const vanished = {};
    const next = {};
    role.claim(vanished, false);
    role.calling(vanished)();
    clock.now = 999;
    expect(role.claim(next, false)).toBe(false);
    clock.now = 1000;
    expect(role.claim(next, false)).toBe(true);
    expect(role.holds(vanished)).toBe(false);
  });

  it('stays with a holder whose call is still running, however long (a long wait)', () => {
    const { role, clock } = roleWithClock(1000);
    const agent = {};
    role.claim(agent, false);
    const end = role.calling(agent);
    clock.now = 60_000;
    expect(role.claim({}, false)).toBe(false);
    end();
    clock.now = 60_999;
    expect(role.claim({}, false)).toBe(false);
    clock.now = 61_000;
    expect(role.claim({}, false)).toBe(true);
  });

  it('a call begun before a takeover does not keep the new holding busy', () => {
    const { role, clock } = roleWithClock(1000);
    const agent = {};
    role.claim(agent, false);
    const oldCall = role.calling(agent);
    role.claim({}, true);
    role.claim(agent, true);
    oldCall();
    oldCall();
    clock.now = 5000;
    expect(role.claim({}, false)).toBe(true);
  });

  it('observe: false takes over at once', () => {
    const { role } = roleWithClock();
    const agent = {};
    const taker = {};
    role.claim(agent, false);
    role.calling(agent);
    expect(role.claim(taker, true)).toBe(true);
    expect(role.holds(agent)).toBe(false);
  });

  it("a tick's session takes the role from a person connected to the kernel between ticks, even while the person is busy", () => {
    const { role } = roleWithClock();
    const person = {};
    const tick = {};
    role.claim(person, false);
    role.calling(person);
    role.preferTick(tick);
    expect(role.claim(tick, false)).toBe(true);
    expect(role.holds(person)).toBe(false);
    // The person logging in again observes: the tick keeps it.
    expect(role.claim(person, false)).toBe(false);
  });
});
