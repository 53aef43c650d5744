// A bounded cache of objects' encoded forms, so that an object read often is encoded once.

interface Entry { form: string; bytes: Buffer; read: number }

/**
 * Encoded forms of cached objects (a list item's Protobuf form), by the object's cached JSON, within a budget of
 * bytes: an object is encoded once while it is read often, and memory stays bounded whatever the collections hold.
 * A changed object has new JSON, so its old form is never found again, and goes first. Reads come in rounds (a
 * list each): room is made by evicting the oldest entries the current round has not used, never those it has, so
 * a list larger than the budget keeps finding the part of it that fits, where evicting the oldest would have
 * evicted, from list to list, each item just before it was needed.
 */
export class EncodedForms {
  private readonly forms = new Map<string, Entry>();
  private size = 0;
  private round = 0;
  /** The round in which every entry was found in use: nothing more is kept until the next. */
  private fullIn = -1;

  constructor(private readonly budgetBytes: number) {}

  /** Starts a round of reads (a list). */
  startRound(): void {
    this.round++;
  }

  /** The object's encoding in `form`, made by `encode` when not kept. */
  get(json: string, form: string, encode: (json: string) => Buffer): Buffer {
    const kept = this.forms.get(json);
    if (kept?.form === form) {
      kept.read = this.round;
      return kept.bytes;
    }
    const bytes = encode(json);
    const cost = bytes.length + json.length;
    if (kept) this.evict(json, kept.bytes);
    if (this.makeRoom(cost)) {
      this.forms.set(json, { form, bytes, read: this.round });
      this.size += cost;
    }
    return bytes;
  }

  /** Evicts the oldest entries not read in this round until `cost` fits; those read in it go to the back. */
  private makeRoom(cost: number): boolean {
    if (cost > this.budgetBytes || this.fullIn === this.round) return false;
    let moved = 0;
    while (this.size + cost > this.budgetBytes) {
      const [json, oldest] = this.forms.entries().next().value!;
      if (oldest.read !== this.round) {
        this.evict(json, oldest.bytes);
        continue;
      }
      if (moved++ === this.forms.size) {
        this.fullIn = this.round;
        return false;
      }
      this.forms.delete(json);
      this.forms.set(json, oldest);
    }
    return true;
  }

  private evict(json: string, bytes: Buffer): void {
    this.forms.delete(json);
    this.size -= bytes.length + json.length;
  }
}
