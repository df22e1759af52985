export interface RequestOptions {
  body?: unknown;
  /** Raw body (string or bytes) sent as is. */
  raw?: string | Uint8Array;
  key?: string | null;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One HTTP request with fetch; JSON bodies are parsed when the response is JSON. */
export async function request(
  base: string,
  method: string,
  path: string,
  { body, raw, key, headers = {} }: RequestOptions = {},
): Promise<TestResponse> {
  const h: Record<string, string> = { ...headers };
  if (key) h['authorization'] = `Bearer ${key}`;
  let payload: string | Uint8Array | undefined = raw;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers: h, body: payload });
  const text = await res.text();
  let parsed: unknown;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}
