import { createHash } from 'node:crypto';
import { ForbiddenError, NotFoundError, PayloadTooLargeError, QuotaExceededError, UnsupportedMediaTypeError } from '../errors.js';
import { newId } from '../ids.js';
import { cleanFilename, detectImageType } from './image-types.js';
import { UNCAPPED_ORG_STORAGE, type OrgStorageCap } from './org-storage.js';
import { bytes, inTransaction, iso, lockKey, num, type StorageDb } from './sql.js';

/** Largest accepted image: 10 MiB. */
export const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Images per session (config SESSION_MAX_IMAGES). */
export const DEFAULT_SESSION_MAX_IMAGES = 100;
/** Image bytes per session (config SESSION_IMAGE_QUOTA_BYTES): 200 MiB. */
export const DEFAULT_SESSION_IMAGE_QUOTA_BYTES = 200 * 1024 * 1024;

export interface ImageStoreOptions {
  /** Largest single image. */
  maxBytes: number;
  /** Most images one session holds. */
  maxPerSession: number;
  /** Most image bytes one session holds. */
  quotaBytesPerSession: number;
  /** The organisation's cap on what all its sessions store. */
  orgCap: OrgStorageCap;
}
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
export function createImageStore(db: StorageDb, opts: Partial<ImageStoreOptions> = {}) {
  const {
    maxBytes = DEFAULT_MAX_IMAGE_BYTES,
    maxPerSession = DEFAULT_SESSION_MAX_IMAGES,
    quotaBytesPerSession = DEFAULT_SESSION_IMAGE_QUOTA_BYTES,
    orgCap = UNCAPPED_ORG_STORAGE,
  } = opts;
  const toRecord = (r: Row): ImageRecord => ({
    id: r.id,
    session_id: r.session_id,
    filename: r.filename,
    content_type: r.content_type,
    size_bytes: num(r.size_bytes),
    created_at: iso(r.created_at),
  });

  async function find(orgId: string, id: string): Promise<Row> {
    if (!IMAGE_ID_RE.test(id)) throw new NotFoundError('Not found: no such image');
    const [row] = await db.sql<Row>(`select ${COLUMNS} from images where id = ?`, [id]);
    if (!row) throw new NotFoundError('Not found: no such image');
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
      // The session's images are counted under its lock, so parallel uploads cannot pass the quota together.
      const row = await inTransaction(db, async (q) => {
        await lockKey(q, `images:${sessionId}`);
        const [held] = await q<{ n: unknown; bytes: unknown }>(
          'select count(*) as n, coalesce(sum(size_bytes), 0) as bytes from images where session_id = ?',
          [sessionId],
        );
        if (num(held?.n) + 1 > maxPerSession)
          throw new QuotaExceededError('count', `Image quota reached: a session holds at most ${maxPerSession} images`);
        if (num(held?.bytes) + data.length > quotaBytesPerSession) {
          throw new QuotaExceededError('bytes', `Image quota reached: a session holds at most ${quotaBytesPerSession} bytes of images`);
        }
        await orgCap.check(q, orgId, data.length);
        const [inserted] = await q<Row>(
          `insert into images (id, organization_id, session_id, user_id, filename, content_type, size_bytes, sha256, content, created_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, now()) returning ${COLUMNS}`,
          [
            id,
            orgId,
            sessionId,
            userId,
            cleanFilename(filename, type),
            type,
            data.length,
            createHash('sha256').update(data).digest('hex'),
            Buffer.from(data.buffer, data.byteOffset, data.byteLength),
          ],
        );
        return inserted;
      });
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
