/**
 * The adapter between our route and the MCP SDK's web-standard transport: the route's input
 * becomes a `Request` (the SDK reads its method and headers; the body goes in already parsed),
 * and the SDK's `Response` becomes our reply. The SDK answers a refusal (wrong Accept, a body
 * that is not JSON-RPC) with a JSON-RPC error document; it is put in our `{error, status}` shape,
 * like every other 4xx of the API (MCP clients read only the status and the text of a refusal).
 */

/** Only these reach the SDK: it checks Accept and Content-Type, and the protocol version. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/** Statuses the stateless JSON transport refuses with (405 cannot happen: the route is POST only). */
export type McpRefusalStatus = 400 | 406 | 415;

export type McpReply =
  | { status: 200; raw: string; contentType: 'application/json' }
  | { status: 202 }
  | { status: McpRefusalStatus; body: { error: string; status: number } };

export function toWebRequest(url: string, headers: Readonly<Record<string, string>>): Request {
  const forwarded = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) forwarded.set(name, value);
  }
  return new Request(url, { method: 'POST', headers: forwarded });
}

/** A JSON-RPC answer as it is, an accepted notification as 202 without a body, a refusal in our error shape. */
export async function fromWebResponse(res: Response): Promise<McpReply> {
  const text = await res.text();
  if (res.status === 200 && text) return { status: 200, raw: text, contentType: 'application/json' };
  if (res.status < 300) return { status: 202 };
  if (res.status >= 500) throw new Error(`the MCP transport answered ${res.status}`); // the error stage: a 500 that names nothing
  const status: McpRefusalStatus = res.status === 406 || res.status === 415 ? res.status : 400;
  return { status, body: { error: errorText(text, status), status } };
}

/** The JSON-RPC error's message, or a plain one for a body that is not one. */
function errorText(body: string, status: McpRefusalStatus): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string' && message) return message.slice(0, 500);
  } catch {
    // not JSON: a plain message below
  }
  return status === 406 ? 'Not acceptable' : status === 415 ? 'Unsupported media type' : 'Invalid request';
}
