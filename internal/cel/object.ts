// Objects typed by a schema. Fields are converted from JSON only when an
// expression reads them, so a rule touching two fields of a large object pays
// for two fields.
import { jsonEquals } from './values.js';

interface FieldReader {
  /** The property name in the JSON data (the field name is its escaped form). */
  readonly property: string;
  readonly convert: (raw: unknown) => unknown;
}

export interface ObjectShape {
  readonly typeName: string;
  readonly fields: ReadonlyMap<string, FieldReader>;
}

export class ObjectValue extends Map<string, unknown> {
  constructor(readonly raw: Readonly<Record<string, unknown>>, readonly shape: ObjectShape) {
    super();
  }

  override get(field: string): unknown {
    if (super.has(field)) return super.get(field);
    const reader = this.shape.fields.get(field);
    const raw = reader && Object.hasOwn(this.raw, reader.property) ? this.raw[reader.property] : undefined;
    // A null field is an absent field, as the storage layer prunes nulls.
    const value = raw === undefined || raw === null ? undefined : reader!.convert(raw);
    super.set(field, value);
    return value;
  }

  equals(other: unknown): boolean {
    return other instanceof ObjectValue && jsonEquals(this.raw, other.raw);
  }

  get celTypeName(): string {
    return this.shape.typeName;
  }

  toJSON(): unknown {
    return this.raw;
  }
}
