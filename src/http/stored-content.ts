/**
 * Response headers for bytes a tenant stored (workspace files, images, agent exports). The API's
 * origin also serves the console, so a stored page that a browser renders could act as any user
 * who opens its link: no sniffing, a CSP that leaves such a page no script, no requests and a
 * unique origin, and a download instead of rendering for every type a browser would run.
 */

/** No loads of any kind, and `sandbox` gives the document an opaque origin with scripts off. */
export const STORED_CONTENT_CSP = "default-src 'none'; sandbox";

/** Types a browser only displays (never runs): these may render inline; all others download. */
const PASSIVE_TYPES = new Set([
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/json',
  'application/octet-stream',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
]);

/** The media type without parameters, lower-cased; '' when the value is not one `type/subtype`. */
function essence(contentType: string): string {
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : '';
}

/** True when a browser given this Content-Type could run something (HTML, SVG, XML, script, PDF, unknown). */
export function isActiveType(contentType: string): boolean {
  const type = essence(contentType);
  return !(PASSIVE_TYPES.has(type) || type.startsWith('audio/') || type.startsWith('video/'));
}

/** An RFC 6266 attachment disposition: an ASCII fallback name and the exact name as `filename*`. */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/**
 * Headers for stored bytes of `contentType`: nosniff and the CSP always; an attachment disposition
 * (named `fileName` when given) for active types.
 */
export function storedContentHeaders(contentType: string, fileName?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': STORED_CONTENT_CSP,
  };
  if (isActiveType(contentType)) headers['Content-Disposition'] = fileName ? attachmentDisposition(fileName) : 'attachment';
  return headers;
}
