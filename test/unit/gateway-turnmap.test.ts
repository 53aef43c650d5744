import { expect } from 'chai';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { turnMap } from '../../gateway/turnmap.js';

describe('gateway turn map', () => {
  it('is one map within a turn of the event loop', () => {
    const current = turnMap<string, number>();
    current().set('a', 1);
    expect(current()).to.equal(current());
    expect(current().get('a')).to.equal(1);
  });

  it('is a new, empty map in the next turn, and the next turn\'s again after that', async () => {
    const current = turnMap<string, number>();
    const first = current();
    first.set('a', 1);
    await nextTurn();
    const second = current();
    expect(second).to.not.equal(first);
    expect(second.size).to.equal(0);
    second.set('b', 2);
    await nextTurn();
    expect(current()).to.not.equal(second);
    expect(current().has('b')).to.equal(false);
  });

  it('is a new, empty map within the turn once it holds its limit of entries, so a long turn keeps no more', () => {
    const current = turnMap<number, number>(3);
    const first = current();
    for (let i = 0; i < 3; i++) current().set(i, i);
    expect(first.size).to.equal(3);
    const second = current();
    expect(second).to.not.equal(first);
    expect(second.size).to.equal(0);
    expect(current()).to.equal(second);
  });
});
