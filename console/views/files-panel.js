// A session's files: sizes and folder marks, upload (a file keeps its name, at the workspace
// root), and a preview of text and images (fetched with the credential; an image is shown as a
// data: URL, which the console's CSP allows for images, unlike blob:).
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, formatBytes } from '../lib/ui.js';

/** Larger text files are previewed only up to this many characters. */
const PREVIEW_CHARS = 20_000;

export function FilesPanel({ sessionId, res, readOnly }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [preview, setPreview] = useState(null);

  const upload = async (e) => {
    const file = e.currentTarget.files?.[0];
    const input = e.currentTarget;
    if (!file) return;
    setError('');
    setBusy(true);
    try {
      await api('POST', `/v1/sessions/${sessionId}/fs/${encodeURIComponent(file.name)}`, { raw: file, contentType: file.type || 'application/octet-stream' });
      res.reload();
    } catch (err) {
      setError(`Not uploaded: ${humanError(err)}`);
    } finally {
      setBusy(false);
      input.value = '';
    }
  };

  const show = async (f) => {
    setError('');
    try {
      const blob = await api('GET', `/v1/sessions/${sessionId}/fs${f.path.split('/').map(encodeURIComponent).join('/')}`, { as: 'blob' });
      const type = f.content_type ?? blob.type ?? '';
      if (type.startsWith('image/')) setPreview({ path: f.path, url: await dataUrl(blob) });
      else {
        const text = await blob.text();
        setPreview({ path: f.path, text: text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}\n…` : text });
      }
    } catch (err) {
      setError(humanError(err, { notFound: 'This file' }));
    }
  };

  const entries = res.data?.data ?? [];
  return html`
    ${!readOnly && html`
      <label class="upload">Upload a file <input type="file" name="upload" disabled=${busy} onChange=${upload} /></label>`}
    <${ErrorLine} error=${error} />
    ${res.data && entries.length === 0 && html`<p class="muted">No files yet.</p>`}
    <ul class="plain files">
      ${entries.map((f) => html`
        <li key=${f.path} data-path=${f.path} data-directory=${String(f.is_directory)}>
          ${f.is_directory
            ? html`<span class="badge">folder</span> <code>${f.path}/</code>`
            : html`<button type="button" class="link" onClick=${() => show(f)} title="Preview"><code>${f.path}</code></button> <span class="muted size">${formatBytes(f.size_bytes)}</span>`}
        </li>`)}
    </ul>
    ${preview && html`
      <figure class="preview" data-testid="file-preview">
        <figcaption><code>${preview.path}</code> <button type="button" class="link" onClick=${() => setPreview(null)}>close</button></figcaption>
        ${preview.url ? html`<img src=${preview.url} alt=${`Preview of ${preview.path}`} />` : html`<pre>${preview.text}</pre>`}
      </figure>`}
  `;
}

function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}
