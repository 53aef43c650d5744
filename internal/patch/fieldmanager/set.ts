// A set of field paths as a trie: at each level the elements that are members
// themselves and the elements that have members below them. FieldsV1 is its
// JSON form: `{}` for a member, `.` for a member that also has children.
import { compareElements, parseElement, serializeElement, type Path, type PathElement } from './fieldpath.js';

interface Child {
  pe: PathElement;
  set: FieldSet;
}

export class FieldSet {
  readonly members = new Map<string, PathElement>();
  readonly children = new Map<string, Child>();

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (not its parents); the empty path is no member. */
  insert(path: Path): void {
    if (path.length === 0) return;
    let s: FieldSet = this;
    for (const pe of path.slice(0, -1)) s = s.child(pe, true)!;
    const last = path[path.length - 1];
    s.members.set(serializeElement(last), last);
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (const pe of path.slice(0, -1)) {
      s = s.child(pe);
      if (!s) return false;
    }
    return s.members.has(serializeElement(path[path.length - 1]));
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializeElement(pe));
  }

  /** The paths below `pe`, relative to it (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.child(pe) ?? EMPTY;
  }

  /** Whether anything lies below `pe`. */
  hasChildren(pe: PathElement): boolean {
    return this.children.has(serializeElement(pe));
  }

  private child(pe: PathElement, create = false): FieldSet | undefined {
    const id = serializeElement(pe);
    let c = this.children.get(id);
    if (!c && create) {
      c = { pe, set: new FieldSet() };
      this.children.set(id, c);
    }
    return c?.set;
  }

  empty(): boolean {
    return this.members.size === 0 && [...this.children.values()].every((c) => c.set.empty());
  }

  union(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.members.set(id, pe);
    for (const [id, pe] of o.members) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const theirs = o.children.get(id);
      out.children.set(id, { pe: c.pe, set: theirs ? c.set.union(theirs.set) : c.set.union(EMPTY) });
    }
    for (const [id, c] of o.children) if (!this.children.has(id)) out.children.set(id, { pe: c.pe, set: c.set.union(EMPTY) });
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const theirs = o.children.get(id);
      if (theirs) out.addChild(id, c.pe, c.set.intersection(theirs.set));
    }
    return out;
  }

  /** Members of this set not in `o`; a child is kept unless `o` has the same paths below it. */
  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const theirs = o.children.get(id);
      out.addChild(id, c.pe, theirs ? c.set.difference(theirs.set) : c.set);
    }
    return out;
  }

  /** Like difference, and a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      if (o.members.has(id)) continue;
      const theirs = o.children.get(id);
      out.addChild(id, c.pe, theirs ? c.set.recursiveDifference(theirs.set) : c.set);
    }
    return out;
  }

  private addChild(id: string, pe: PathElement, set: FieldSet): void {
    if (!set.empty()) this.children.set(id, { pe, set });
  }

  /** Every member path, members of a level before the levels below, each level in FieldsV1 order. */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = sorted(this.members.values()).map((pe) => [...prefix, pe]);
    for (const c of sortedChildren(this.children.values())) out.push(...c.set.paths([...prefix, c.pe]));
    return out;
  }

  toFieldsV1(): Record<string, unknown> {
    return this.emit(false);
  }

  private emit(self: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (self && !this.empty()) out['.'] = {};
    const byId = new Map<string, { pe: PathElement; member: boolean; set?: FieldSet }>();
    for (const [id, pe] of this.members) byId.set(id, { pe, member: true });
    for (const [id, c] of this.children) {
      if (!c.set.empty()) byId.set(id, { pe: c.pe, member: this.members.has(id), set: c.set });
    }
    const entries = [...byId.values()].sort((a, b) => compareElements(a.pe, b.pe));
    for (const e of entries) out[serializeElement(e.pe)] = e.set ? e.set.emit(e.member) : {};
    return out;
  }

  static fromFieldsV1(json: unknown): FieldSet {
    const out = new FieldSet();
    read(out, json);
    return out;
  }
}

const EMPTY = new FieldSet();

const sorted = (pes: Iterable<PathElement>) => [...pes].sort(compareElements);
const sortedChildren = (cs: Iterable<Child>) => [...cs].sort((a, b) => compareElements(a.pe, b.pe));

/** Reads one FieldsV1 level into `into`; an element with `{}` or `.` is a member. */
function read(into: FieldSet, json: unknown): void {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('FieldsV1 must be an object');
  for (const [name, sub] of Object.entries(json)) {
    if (name === '.') continue;
    const pe = parseElement(name);
    if (!pe) continue;
    const subObj = sub as Record<string, unknown>;
    const keys = typeof subObj === 'object' && subObj !== null ? Object.keys(subObj) : [];
    if (keys.length === 0 || keys.includes('.')) into.members.set(serializeElement(pe), pe);
    if (keys.some((k) => k !== '.')) {
      const child = new FieldSet();
      read(child, subObj);
      if (!child.empty()) into.children.set(serializeElement(pe), { pe, set: child });
    }
  }
}
