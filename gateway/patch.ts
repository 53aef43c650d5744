// PATCH: JSON patch (RFC 6902), merge patch (RFC 7386) and strategic merge patch.
import fastJsonPatch from 'fast-json-patch';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, conflict, unsupportedMediaType } from '../internal/apimachinery/status.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { isDryRun, readRaw } from './body.js';
import { writeWithRetry } from './handlers.js';
import { writeObject } from './respond.js';

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

/** RFC 7386: objects merge key by key, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function parsePatch(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
}

function applyJsonPatch(current: ApiObject, ops: unknown): ApiObject {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  const validation = fastJsonPatch.validate(ops as fastJsonPatch.Operation[], current);
  if (validation) {
    if (validation.name === 'TEST_OPERATION_FAILED') throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: test operation failed`);
    throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${validation.message.split('\n')[0]}`);
  }
  return fastJsonPatch.applyPatch(structuredClone(current), ops as fastJsonPatch.Operation[], false, false).newDocument as ApiObject;
}

export async function patchObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const dryRun = isDryRun(r.query);
  const type = (r.ctx.get('Content-Type') || '').split(';')[0].trim();
  if (!PATCH_TYPES.includes(type)) throw unsupportedMediaType(type, PATCH_TYPES);
  const patch = parsePatch(await readRaw(r.ctx));
  if (type !== 'application/json-patch+json' && !isObject(patch)) throw badRequest('the patch must be a JSON object');
  const requested = type === 'application/json-patch+json' ? undefined : ((patch as ApiObject).metadata?.resourceVersion);
  const result = await writeWithRetry(r, backends, Boolean(requested), async (current) => {
    if (requested && requested !== current.metadata?.resourceVersion) {
      throw conflict(r.objects.gr, r.info.name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    const next = type === 'application/json-patch+json' ? applyJsonPatch(current, patch) : (mergePatch(current, stripDirectives(patch)) as ApiObject);
    if (!isObject(next)) throw badRequest('the patch did not produce an object');
    return next;
  }, dryRun);
  writeObject(r.ctx, r.def, 200, result);
}

/** Strategic-merge directives (`$patch`, `$setElementOrder/...`, ...) carry no data of their own. */
function stripDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(stripDirectives);
  if (!isObject(patch)) return patch;
  return Object.fromEntries(Object.entries(patch).filter(([k]) => !k.startsWith('$')).map(([k, v]) => [k, stripDirectives(v)]));
}
