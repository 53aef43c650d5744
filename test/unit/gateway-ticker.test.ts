// The shared ticker behind watch bookmarks: every callback in the same turn, and no timer once none is left.
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedTicker } from '../../gateway/ticker.js';

describe('gateway shared ticker', () => {
  it('calls callbacks added at different times in the same turns, and stops with the last one removed', async () => {
    const ticker = new SharedTicker(20);
    const calls: Array<[id: number, turn: number]> = [];
    let turn = 0;
    const callback = (id: number) => () => { calls.push([id, turn]); setImmediate(() => { turn++; }); };
    const turnsOf = (id: number) => calls.filter(([i]) => i === id).map(([, t]) => t);
    const removeA = ticker.add(callback(1));
    await sleep(30);
    const removeB = ticker.add(callback(2)); // half a period later: a timer of its own would fire out of phase
    await sleep(70);
    expect(turnsOf(2).length).to.be.at.least(2);
    expect(turnsOf(1).slice(-turnsOf(2).length), 'both called in the same turns').to.deep.equal(turnsOf(2));
    removeA();
    const before = turnsOf(1).length;
    await sleep(50);
    expect(turnsOf(1).length, 'a removed callback is not called').to.equal(before);
    removeB();
    const total = calls.length;
    await sleep(50);
    expect(calls.length, 'no callback left: nothing runs').to.equal(total);
    const again: number[] = [];
    const removeC = ticker.add(() => again.push(1));
    await sleep(50);
    removeC();
    expect(again.length, 'a callback added after the timer stopped starts it again').to.be.at.least(1);
  });
});
