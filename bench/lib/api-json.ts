/** One JSON request to the service with an API key; throws with the answer unless 2xx. */
export async function apiJson(method: string, url: string, body: unknown, key: string): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}
