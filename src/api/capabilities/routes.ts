import { Type } from '@sinclair/typebox';
import { CapabilityIdParams, CapabilityInfo, CapabilityList, CapabilityListQuery } from '../../../schemas/capabilities.js';
import { ErrorResponse } from '../../../schemas/common.js';
import { capabilityView, type Capability } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import { defineRoutes, type Route } from '../../http/route.js';
import type { CapabilityRegistry } from '../../capabilities/index.js';

const ref = (s: { $id?: string }) => Type.Ref(s.$id!);
const tags = ['capabilities'];

/** The capability registry, read-only (spec 4.1: GET /v1/capabilities). */
export function capabilitiesRoutes({ capabilities }: { capabilities: CapabilityRegistry }): Route[] {
  // A registered capability never changes, so its JSON is built once and replies only copy it out.
  const json = new WeakMap<Capability, string>();
  const jsonOf = (cap: Capability): string => json.get(cap) ?? json.set(cap, JSON.stringify(capabilityView(cap))).get(cap)!;
  const reply = (raw: string) => ({ status: 200, raw, contentType: 'application/json' });
  return defineRoutes([
    {
      method: 'GET',
      path: '/v1/capabilities',
      auth: 'user',
      summary: 'List the available capabilities',
      tags,
      schema: { query: CapabilityListQuery, response: { 200: ref(CapabilityList) } },
      async handler({ query }) {
        const list = capabilities.list().filter((cap) => matchesSearch(cap, query.search));
        const page = list.slice(query.offset, query.offset + query.limit);
        return reply(`{"data":[${page.map(jsonOf).join(',')}],"total":${list.length},"offset":${query.offset},"limit":${query.limit}}`);
      },
    },
    {
      method: 'GET',
      path: '/v1/capabilities/:id',
      auth: 'user',
      summary: 'Get one capability',
      tags,
      schema: { params: CapabilityIdParams, response: { 200: ref(CapabilityInfo), 404: ref(ErrorResponse) } },
      async handler({ params }) {
        const cap = capabilities.get(params.id);
        if (!cap) throw new NotFoundError();
        return reply(jsonOf(cap));
      },
    },
  ]);
}

/** `?search=`: a case-insensitive substring of the id, name or description; empty matches all. */
function matchesSearch(cap: Capability, search: string | undefined): boolean {
  if (!search) return true;
  const needle = search.toLowerCase();
  return [cap.id, cap.name, cap.description].some((text) => text.toLowerCase().includes(needle));
}
