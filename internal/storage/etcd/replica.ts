// One storage process of several on one etcd: it follows what is published on
// NATS (to know where the stream is), campaigns to publish, and when elected
// resumes the stream after the last revision it saw published, so a takeover
// leaves no gap. Events the previous publisher sent that this process had not
// seen yet are sent again: subscribers drop revisions they have seen.
import { hostname } from 'node:os';
import type { EventPublisher } from '../publisher.js';
import { PublisherElection } from './election.js';
import type { EtcdStore } from './store.js';

/** The lease of the publisher key: a dead publisher is replaced within this. */
export const PUBLISHER_TTL_SECONDS = 5;

export async function runReplica(store: EtcdStore, publisher: EventPublisher, log: (line: string) => void): Promise<{ stop(): Promise<void> }> {
  let seen = 0;
  store.trackStream();
  await publisher.follow((revision) => {
    if (revision > seen) seen = revision;
    store.noteStreamRevision(revision);
  });
  // What was published before the subscription was committed before this revision.
  const followedFrom = (await store.currentRevision()).revision;
  const election: PublisherElection = new PublisherElection(store.client, store.keys.publisherKey, {
    ttlSeconds: PUBLISHER_TTL_SECONDS,
    identity: `${hostname()}/${process.pid}`,
    elected: () => {
      const after = seen || followedFrom;
      publisher.resume(after);
      store.startPublishing(after, () => election.mayPublish());
    },
    deposed: () => store.stopPublishing(),
    log,
  });
  return { stop: () => election.stop() };
}
