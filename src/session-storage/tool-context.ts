/**
 * The storage side of the turn engine's ports: per-session tool storage (`ToolContextFactory`
 * in actors/session/steps/tool-context.ts) and the images of `image_file` parts (`ImageSource`).
 */
import {
  CONNECTION_SECRET_PREFIX,
  type SessionFs,
  type SessionKv,
  type SessionSchedules,
  type SessionSecrets,
  type SessionSql,
} from '../capabilities/index.js';
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

/**
 * The real `ToolContextFactory`: the session's database-backed stores. A turn that does not
 * act for the session's creator (`may_use_connections` false) cannot use the creator's
 * connection secrets (`connection:<provider>`): they read as absent, though they stay listed
 * and are still redacted from tool results.
 */
export function createToolStorageFactory(storage: { forSession(session: { id: string; organization_id: string }): ToolStorage }) {
  return function toolStorageFor(session: { session_id: string; org_id: string; may_use_connections?: boolean }): ToolStorage {
    const { fs, kv, secrets, sql, schedules } = storage.forSession({ id: session.session_id, organization_id: session.org_id });
    return { fs, kv, secrets: session.may_use_connections ? secrets : withoutConnections(secrets), sql, schedules };
  };
}

/** The secrets port with the connection secrets' values withheld from `get`. */
export function withoutConnections(secrets: SessionSecrets): SessionSecrets {
  return {
    ...secrets,
    get: async (name) => (name.startsWith(CONNECTION_SECRET_PREFIX) ? null : secrets.get(name)),
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
    async sessionOf(orgId: string, imageId: string): Promise<string | null> {
      return (await orNull(images.get(orgId, imageId)))?.session_id ?? null;
    },
    async load(orgId: string, imageId: string): Promise<LlmImagePart | null> {
      const found = await orNull(images.load(orgId, imageId));
      return found ? { type: 'image', media_type: found.record.content_type, data_base64: found.data.toString('base64') } : null;
    },
  };
}
