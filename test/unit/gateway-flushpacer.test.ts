import { expect } from 'chai';
import { FlushPacer } from '../../gateway/flushpacer.js';

const INTERVAL_MS = 100;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A watcher that records when it was flushed (performance.now()). */
function watcher(): { flush(): void; flushes: number[] } {
  const flushes: number[] = [];
  return { flushes, flush: () => { flushes.push(performance.now()); } };
}

/** Waits until w has been flushed n times, at most timeoutMs. */
async function flushed(w: { flushes: number[] }, n: number, timeoutMs = 1_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (w.flushes.length < n && performance.now() < deadline) await sleep(2);
  expect(w.flushes).to.have.length(n);
}

describe('gateway flush pacer', () => {
  it('flushes a watcher that wrote nothing within the interval at the end of the turn, once for the turn\'s events', async () => {
    const pacer = new FlushPacer(INTERVAL_MS);
    const w = watcher();
    pacer.note(w, performance.now());
    pacer.note(w, performance.now());
    expect(w.flushes).to.have.length(0);
    await turn();
    expect(w.flushes).to.have.length(1);
  });

  it('holds the events of a watcher flushed within the interval until the interval since that flush ends, then flushes once', async () => {
    const pacer = new FlushPacer(INTERVAL_MS);
    const w = watcher();
    pacer.note(w, performance.now());
    await turn();
    for (let i = 0; i < 3; i++) {
      pacer.note(w, performance.now());
      await sleep(2);
    }
    expect(w.flushes).to.have.length(1);
    await flushed(w, 2);
    // A timer may fire up to a millisecond early as performance.now() tells it.
    expect(w.flushes[1] - w.flushes[0]).to.be.at.least(INTERVAL_MS - 1);
    await sleep(INTERVAL_MS * 2);
    expect(w.flushes).to.have.length(2);
  });

  it('keeps each watcher on its own phase: the one flushed first is flushed first again', async () => {
    const pacer = new FlushPacer(INTERVAL_MS);
    const [early, late] = [watcher(), watcher()];
    pacer.note(early, performance.now());
    await turn();
    await sleep(INTERVAL_MS / 2);
    pacer.note(late, performance.now());
    await turn();
    pacer.note(early, performance.now());
    pacer.note(late, performance.now());
    await flushed(early, 2);
    expect(late.flushes).to.have.length(1);
    await flushed(late, 2);
    expect(late.flushes[1] - late.flushes[0]).to.be.at.least(INTERVAL_MS - 1);
  });

  it('never flushes a watcher it was told to forget', async () => {
    const pacer = new FlushPacer(INTERVAL_MS);
    const [gone, kept] = [watcher(), watcher()];
    pacer.note(gone, performance.now());
    pacer.note(kept, performance.now());
    await turn();
    pacer.note(gone, performance.now());
    pacer.note(kept, performance.now());
    pacer.forget(gone);
    await flushed(kept, 2);
    expect(gone.flushes).to.have.length(1);
    pacer.note(gone, performance.now());
    pacer.forget(gone);
    await turn();
    expect(gone.flushes).to.have.length(1);
  });
});
