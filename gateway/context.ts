// What one API request carries through the handlers.
import type Koa from 'koa';
import type { KindDef, Registry } from '../internal/registry/index.js';
import type { RequestInfo } from './requestinfo.js';
import type { UserInfo } from './backends.js';
import type { Objects } from './objects.js';
import type { Allocator } from './serviceallocator.js';

export interface RequestState {
  info: RequestInfo;
  user: UserInfo;
}

/** The request's query, parsed once for every step that reads it. */
export function requestQuery(ctx: Koa.Context): URLSearchParams {
  return (ctx.state.query ??= new URLSearchParams(ctx.querystring));
}

export interface ResourceRequest {
  ctx: Koa.Context;
  info: RequestInfo;
  user: UserInfo;
  def: KindDef;
  objects: Objects;
  query: URLSearchParams;
  registry: Registry;
  /** The shared pools a spec write of this kind draws from (a Service's cluster IPs and node ports); none for most kinds. */
  allocator?: Allocator;
}
