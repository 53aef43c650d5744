// Which fields of a variable an expression selects, found in its syntax tree:
// e.g. whether a claim mapping reads `claims.email` (plain or optional select).
import type { Node } from './instrument.js';

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).op === 'string';

/** The nodes directly below a node, whatever its kind. */
function children(node: Node): Node[] {
  const args = Array.isArray(node.args) ? node.args.flat() : [node.args];
  return args.filter(isNode);
}

/** True when the tree contains `variable.field` or `variable.?field`. */
export function selectsField(root: Node, variable: string, field: string): boolean {
  const pending: Node[] = [root];
  for (let node = pending.pop(); node; node = pending.pop()) {
    if ((node.op === '.' || node.op === '.?') && node.args[1] === field) {
      const operand = node.args[0];
      if (isNode(operand) && operand.op === 'id' && operand.args === variable) return true;
    }
    pending.push(...children(node));
  }
  return false;
}

/** True when the tree reads the variable anywhere (comprehension bodies included). */
export function referencesVariable(root: Node, variable: string): boolean {
  const pending: unknown[] = [root];
  const seen = new Set<unknown>();
  while (pending.length) {
    const v = pending.pop();
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      pending.push(...v);
    } else if (isNode(v)) {
      if (v.op === 'id' && v.args === variable) return true;
      pending.push(v.args);
    } else if (Object.getPrototypeOf(v) === Object.prototype) {
      pending.push(...Object.values(v));
    }
  }
  return false;
}
