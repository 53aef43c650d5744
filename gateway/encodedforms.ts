// A bounded cache of objects' encoded forms, so that an object read often is encoded once.

/**
 * Encoded forms of cached objects (a list item's Protobuf message), by the object's cached JSON, within a
 * budget of bytes: an object is encoded once while it is read often, and memory stays bounded whatever the
 * collections hold. The oldest entries go first; a changed object has new JSON, so its old form is never found.
 */
export class EncodedForms {
  private readonly forms = new Map<string, { form: string; bytes: Buffer }>();
  private size = 0;

  constructor(private readonly budgetBytes: number) {}

  /** The object's encoding in `form`, made by `encode` when not kept. */
  get(json: string, form: string, encode: (json: string) => Buffer): Buffer {
    const kept = this.forms.get(json);
    if (kept?.form === form) return kept.bytes;
    const bytes = encode(json);
    const cost = bytes.length + json.length;
    if (cost > this.budgetBytes) return bytes;
    if (kept) this.evict(json, kept.bytes);
    this.forms.set(json, { form, bytes });
    this.size += cost;
    for (const [oldest, { bytes: b }] of this.forms) {
      if (this.size <= this.budgetBytes) break;
      this.evict(oldest, b);
    }
    return bytes;
  }

  private evict(json: string, bytes: Buffer): void {
    this.forms.delete(json);
    this.size -= bytes.length + json.length;
  }
}
