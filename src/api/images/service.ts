import { InvalidRequestError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { Principal } from '../../auth/index.js';
import { parseMultipart } from '../../http/index.js';
import type { ImageRecord, Storage } from '../../session-storage/index.js';

/** Image upload: a multipart `file` for one of the caller's sessions (`session_id` field or query). */
export function createImageService({ storage }: { storage: Storage }) {
  const images = storage.images;
  return {
    maxBytes: images.maxBytes,

    async upload(principal: Principal, body: Buffer, contentType: string | undefined, querySessionId?: string): Promise<ImageRecord> {
      const parts = parseMultipart(body, contentType);
      const file = parts.find((p) => p.name === 'file' && p.filename !== undefined) ?? parts.find((p) => p.name === 'file');
      if (!file || file.data.length === 0) throw new InvalidRequestError('Invalid request: multipart field file is required');
      const sessionId =
        parts
          .find((p) => p.name === 'session_id')
          ?.data.toString('utf8')
          .trim() || querySessionId;
      if (!sessionId || !isAnyUuid(sessionId)) throw new InvalidRequestError('Invalid request: session_id is required');
      const session = await storage.access.owned(principal, sessionId.toLowerCase());
      return images.create({
        orgId: principal.org_id,
        userId: principal.user_id,
        sessionId: session.id,
        filename: file.filename,
        data: file.data,
      });
    },

    /** An image is its session's: readable and removable by whoever may reach the session. */
    async load(principal: Principal, id: string) {
      await storage.access.owned(principal, (await images.get(principal.org_id, id)).session_id);
      return images.load(principal.org_id, id);
    },
    async remove(principal: Principal, id: string): Promise<void> {
      await storage.access.owned(principal, (await images.get(principal.org_id, id)).session_id);
      await images.remove(principal.org_id, id);
    },
  };
}

export type ImageService = ReturnType<typeof createImageService>;
