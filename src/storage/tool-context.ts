/**
 * The storage side of the turn engine's ports: per-session tool storage (`ToolContextFactory`
 * in actors/tool-context.ts) and the images of `image_file` parts (`ImageSource`).
 */
import type { SessionFs, SessionKv, SessionSchedules, SessionSecrets, SessionSql } from '../capabilities/index.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import type { LlmImagePart } from '../llm/index.js';
import type { ImageStore } from './image-store.js';

/** What tools of one session read and write. */
export interface ToolStorage {
  fs: SessionFs;
  kv: SessionKv;
  secrets: SessionSecrets;
  sql: SessionSql;
  schedules: SessionSchedules;
}

/** The real `ToolContextFactory`: the session's database-backed stores. */
export function createToolStorageFactory(storage: { forSession(session: { id: string; organization_id: string }): ToolStorage }) {
  return function toolStorageFor(session: { session_id: string; org_id: string }): ToolStorage {
    const { fs, kv, secrets, sql, schedules } = storage.forSession({ id: session.session_id, organization_id: session.org_id });
    return { fs, kv, secrets, sql, schedules };
  };
}

/** The real `ImageSource`: an image exists only inside its organisation. */
export function createImageSource(images: Pick<ImageStore, 'get' | 'load'>) {
  /** Absent and foreign images are both "no such image" here. */
  async function orNull<T>(work: Promise<T>): Promise<T | null> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof ForbiddenError) return null;
      throw err;
    }
  }
  return {
    async exists(orgId: string, imageId: string): Promise<boolean> {
      return (await orNull(images.get(orgId, imageId))) !== null;
    },
    async load(orgId: string, imageId: string): Promise<LlmImagePart | null> {
      const found = await orNull(images.load(orgId, imageId));
      return found ? { type: 'image', media_type: found.record.content_type, data_base64: found.data.toString('base64') } : null;
    },
  };
}
