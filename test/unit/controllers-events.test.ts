// The Event recorder: events/v1 Events as the platform's controllers write them,
// repeats folded into a series (written at the second occurrence, then only when the
// series ends or is refreshed), a bounded queue, retries of what the server could not take.
import { expect } from 'chai';
import { EventRecorder, eventName, microTime, referenceTo, type EventSink, type RecordedEvent } from '../../internal/controllers/events.js';

class FakeSink implements EventSink {
  created: RecordedEvent[] = [];
  patched: RecordedEvent[] = [];
  answers: number[] = [];
  async create(e: RecordedEvent): Promise<number> {
    const status = this.answers.shift() ?? 201;
    if (status === 201) this.created.push(structuredClone(e));
    return status;
  }
  async patchSeries(e: RecordedEvent): Promise<number> {
    this.patched.push(structuredClone(e));
    return this.created.some((c) => c.metadata.name === e.metadata.name) ? 200 : 404;
  }
}

const job = referenceTo({ metadata: { name: 'pi', namespace: 'ns', uid: 'u1', resourceVersion: '7' } }, { apiVersion: 'batch/v1', kind: 'Job' });

describe('controllers: Event recorder', () => {
  let now: number;
  let sink: FakeSink;
  let rec: EventRecorder;
  beforeEach(() => {
    now = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    sink = new FakeSink();
    rec = new EventRecorder(sink, 'ttl-after-finished-controller', { instance: 'ttl-after-finished-controller-host', clock: () => now, retryMs: 1, maxTries: 3 });
  });
  afterEach(() => rec.stop());

  it('writes an events/v1 Event with the fields upstream sets', async () => {
    rec.event(job, 'Normal', 'Deleted', 'Delete', 'Deleted job pi');
    await rec.flushed();
    expect(sink.created).to.have.length(1);
    const e = sink.created[0];
    expect(e).to.deep.include({
      apiVersion: 'events.svc.io/v1', kind: 'Event', eventTime: '2025-01-02T03:04:05.678000Z', type: 'Normal', reason: 'Deleted', action: 'Delete',
      note: 'Deleted job pi', reportingController: 'ttl-after-finished-controller', reportingInstance: 'ttl-after-finished-controller-host',
      regarding: { apiVersion: 'batch/v1', kind: 'Job', name: 'pi', namespace: 'ns', uid: 'u1', resourceVersion: '7' },
    });
    expect(e.metadata).to.deep.equal({ name: `pi.${(BigInt(now) * 1_000_000n).toString(16)}`, namespace: 'ns' });
    expect(e.series).to.equal(undefined);
  });

  it('a cluster-scoped object gets its event in default; an invalid name becomes a UUID', () => {
    expect(eventName('Bad_Name', now)).to.match(/^[0-9a-f-]{36}$/);
    expect(microTime(0)).to.equal('1970-01-01T00:00:00.000000Z');
    const ns = referenceTo({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
    rec.event(ns, 'Warning', 'Failed', 'Sync', 'no');
    return rec.flushed().then(() => expect(sink.created[0].metadata.namespace).to.equal('default'));
  });

  it('a hot loop makes one Event with a series: the second occurrence at once, the count when the series ends', async () => {
    for (let i = 0; i < 100; i++) {
      now += 10;
      rec.event({ ...job, resourceVersion: String(8 + i) }, 'Warning', 'BackoffLimitExceeded', 'Sync', `note ${i}`);
    }
    await rec.flushed();
    expect(sink.created).to.have.length(1);
    expect(sink.patched).to.have.length(1);
    expect(sink.patched[0].series?.count).to.equal(2);
    expect(sink.patched[0].metadata.name).to.equal(sink.created[0].metadata.name);
    rec.finish(); // not yet idle for 6 minutes: nothing written
    await rec.flushed();
    expect(sink.patched).to.have.length(1);
    now += 6 * 60_000 + 1;
    rec.finish();
    await rec.flushed();
    expect(sink.patched).to.have.length(2);
    expect(sink.patched[1].series).to.deep.equal({ count: 100, lastObservedTime: microTime(now - 6 * 60_000 - 1) });
    // Forgotten: the next occurrence starts a new Event.
    rec.event(job, 'Warning', 'BackoffLimitExceeded', 'Sync', 'again');
    await rec.flushed();
    expect(sink.created).to.have.length(2);
  });

  it('a live series is refreshed with its count; other reasons, types or objects are events of their own', async () => {
    for (let i = 0; i < 3; i++) rec.event(job, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: p${i}`);
    rec.event(job, 'Normal', 'SuccessfulDelete', 'Delete', 'Deleted pod: p0');
    rec.event(job, 'Warning', 'SuccessfulCreate', 'Create', 'x');
    rec.event({ ...job, name: 'other', uid: 'u2' }, 'Normal', 'SuccessfulCreate', 'Create', 'x');
    rec.refresh();
    await rec.flushed();
    expect(sink.created.map((e) => e.reason)).to.deep.equal(['SuccessfulCreate', 'SuccessfulDelete', 'SuccessfulCreate', 'SuccessfulCreate']);
    expect(sink.patched.map((e) => e.series?.count)).to.deep.equal([2, 3]);
    rec.refresh(); // nothing new since
    await rec.flushed();
    expect(sink.patched).to.have.length(2);
  });

  it('a series whose event is gone is created with its count', async () => {
    rec.event(job, 'Normal', 'A', 'B', 'n');
    await rec.flushed();
    sink.created.length = 0;
    rec.event(job, 'Normal', 'A', 'B', 'n');
    await rec.flushed();
    expect(sink.created).to.have.length(1);
    expect(sink.created[0].series?.count).to.equal(2);
  });

  it('retries what the server could not take, gives up on a refusal, drops beyond the queue bound', async () => {
    sink.answers = [503, 0, 201];
    rec.event(job, 'Normal', 'A', 'B', 'n');
    await rec.flushed();
    expect(sink.created).to.have.length(1);
    sink.answers = [422];
    rec.event(job, 'Normal', 'C', 'B', 'n');
    await rec.flushed();
    expect(sink.created).to.have.length(1);
    sink.created.length = 0;
    const small = new EventRecorder(sink, 'c', { clock: () => now, maxQueued: 2 });
    const errors = console.error;
    console.error = () => undefined;
    try {
      for (let i = 0; i < 5; i++) small.event({ ...job, name: `o${i}` }, 'Normal', 'A', 'B', 'n');
    } finally {
      console.error = errors;
    }
    await small.flushed();
    // The first is written at once, two wait, two are dropped.
    expect(sink.created.map((e) => e.regarding.name)).to.deep.equal(['o0', 'o1', 'o2']);
  });
});
