import { CapabilityIdParams, CapabilityInfo, CapabilityList, CapabilityListQuery } from '../../../schemas/capabilities.js';
import { ErrorResponse, ref } from '../../../schemas/common.js';
import { capabilityView, type Capability, type CapabilityView } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import type { CapabilityRegistry } from '../../capabilities/index.js';
import { encodedJsonReply } from '../../http/index.js';
import { route, type Route } from '../../http/index.js';

const tags = ['capabilities'];

/** The capability registry, read-only (spec 4.1: GET /v1/capabilities). */
export function capabilitiesRoutes({ capabilities }: { capabilities: CapabilityRegistry }): Route[] {
  // A registered capability never changes, so its JSON is built once and replies only copy it out.
  const encoded = new WeakMap<Capability, { view: CapabilityView; json: string }>();
  const encode = (cap: Capability) => {
    let entry = encoded.get(cap);
    if (!entry) {
      const view = capabilityView(cap);
      entry = { view, json: JSON.stringify(view) };
      encoded.set(cap, entry);
    }
    return entry;
  };
  return [
    route(
      {
        method: 'GET',
        path: '/v1/capabilities',
        auth: 'user',
        summary: 'List the available capabilities',
        tags,
        schema: { query: CapabilityListQuery, response: { 200: ref(CapabilityList) } },
      },
      async ({ query }) => {
        const list = capabilities.list().filter((cap) => matchesSearch(cap, query.search));
        const offset = query.offset ?? 0;
        const entries = list.slice(offset, query.limit === undefined ? undefined : offset + query.limit).map(encode);
        const limit = query.limit ?? entries.length;
        const raw = `{"data":[${entries.map((e) => e.json).join(',')}],"total":${list.length},"offset":${offset},"limit":${limit}}`;
        return encodedJsonReply(200, raw, { data: entries.map((e) => e.view), total: list.length, offset, limit });
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/capabilities/:id',
        auth: 'user',
        summary: 'Get one capability',
        tags,
        schema: { params: CapabilityIdParams, response: { 200: ref(CapabilityInfo), 404: ref(ErrorResponse) } },
      },
      async ({ params }) => {
        const cap = capabilities.get(params.id);
        if (!cap) throw new NotFoundError();
        const { view, json } = encode(cap);
        return encodedJsonReply(200, json, view);
      },
    ),
  ];
}

/** `?search=`: a case-insensitive substring of the id, name or description; empty matches all. */
function matchesSearch(cap: Capability, search: string | undefined): boolean {
  if (!search) return true;
  const needle = search.toLowerCase();
  return [cap.id, cap.name, cap.description].some((text) => text.toLowerCase().includes(needle));
}
