import { createHash } from 'node:crypto';
import { ForbiddenError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { newId } from '../ids.js';
import { cleanFilename, detectImageType } from './image-types.js';
import { bytes, iso, num, type StorageDb } from './sql.js';

/** Largest accepted image: 10 MiB. */
export const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** `img_` followed by 32 lower-case hex digits (a UUIDv7 without dashes: ids sort by time). */
export const IMAGE_ID_RE = /^img_[0-9a-f]{32}$/;

export interface ImageRecord {
  id: string;
  session_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  created_at: string;
}

export interface ImageUpload {
  orgId: string;
  userId: string;
  sessionId: string;
  filename?: string;
  data: Uint8Array;
}

interface Row {
  id: string;
  organization_id: string;
  session_id: string;
  filename: string;
  content_type: string;
  size_bytes: unknown;
  created_at: unknown;
}

const COLUMNS = 'id, organization_id, session_id, filename, content_type, size_bytes, created_at';

/**
 * Uploaded images on the `images` table: org-owned, tied to a session (deleted with it). The
 * type comes from the magic bytes; the caller checks that the session is the caller's.
 */
export function createImageStore(db: StorageDb, { maxBytes = DEFAULT_MAX_IMAGE_BYTES }: { maxBytes?: number } = {}) {
  const toRecord = (r: Row): ImageRecord => ({
    id: r.id, session_id: r.session_id, filename: r.filename, content_type: r.content_type, size_bytes: num(r.size_bytes), created_at: iso(r.created_at),
  });

  async function find(orgId: string, id: string): Promise<Row> {
    if (!IMAGE_ID_RE.test(id)) throw new NotFoundError('Image not found');
    const [row] = await db.sql<Row>(`select ${COLUMNS} from images where id = ?`, [id]);
    if (!row) throw new NotFoundError('Image not found');
    if (row.organization_id !== orgId) throw new ForbiddenError();
    return row;
  }

  return {
    maxBytes,

    async create({ orgId, userId, sessionId, filename, data }: ImageUpload): Promise<ImageRecord> {
      if (data.length > maxBytes) throw new PayloadTooLargeError(`Image is ${data.length} bytes; the maximum is ${maxBytes} bytes`);
      const type = detectImageType(data);
      if (!type) throw new UnsupportedMediaTypeError('Unsupported image type: PNG, JPEG, GIF or WebP expected');
      const id = 'img_' + newId().replaceAll('-', '');
      const [row] = await db.sql<Row>(
        `insert into images (id, organization_id, session_id, user_id, filename, content_type, size_bytes, sha256, content, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, now()) returning ${COLUMNS}`,
        [id, orgId, sessionId, userId, cleanFilename(filename, type), type, data.length,
          createHash('sha256').update(data).digest('hex'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)],
      );
      return toRecord(row!);
    },

    /** The image, when it belongs to the caller's organisation: 404 when absent, 403 for another org's. */
    async get(orgId: string, id: string): Promise<ImageRecord> {
      return toRecord(await find(orgId, id));
    },

    /** Metadata and bytes, e.g. for a turn that sends an `image_file` part to a vision model. */
    async load(orgId: string, id: string): Promise<{ record: ImageRecord; data: Buffer }> {
      const row = await find(orgId, id);
      const [content] = await db.sql<{ content: unknown }>('select content from images where id = ?', [id]);
      return { record: toRecord(row), data: bytes(content!.content) };
    },

    async remove(orgId: string, id: string): Promise<void> {
      await find(orgId, id);
      await db.sql('delete from images where id = ? and organization_id = ?', [id, orgId]);
    },
  };
}

export type ImageStore = ReturnType<typeof createImageStore>;
