// Public names of the capability storage. Other folders import from here only.
export { createStorage } from './storage-service.js';
export type { Storage, StorageDeps, StorageOptions, SessionStorage } from './storage-service.js';
export { createSessionFiles, sessionFsPort, toFileStat, DEFAULT_SESSION_FS_QUOTA_BYTES } from './file-store.js';
export type { FileRecord, FileWriteOptions, SessionFiles } from './file-store.js';
export { normalizeFsPath, normalizeEntryPath, WORKSPACE_ROOT } from './fs-paths.js';
export { cleanContentType } from './content-type.js';
export { ReadOnlyFileError } from './errors.js';
export { FeatureNotEnabledError } from './session-access.js';
export type { SessionAccess, StorageSession } from './session-access.js';
export { IMAGE_ID_RE, DEFAULT_MAX_IMAGE_BYTES } from './image-store.js';
export type { ImageRecord, ImageStore } from './image-store.js';
export { PROVIDER_RE, connectionSecretName, USER_CONNECTION_PURPOSE } from './connection-store.js';
export type { ConnectionRecord, ConnectionStore } from './connection-store.js';
export { SESSION_SECRET_PURPOSE } from './secret-store.js';
export { createScheduleQueue } from './schedule-queue.js';
export type { ScheduleClaim, ScheduleQueue } from './schedule-queue.js';
