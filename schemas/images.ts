import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common.js';

export const IMAGE_ID_PATTERN = '^img_[0-9a-f]{32}$';

/** An uploaded image's record (the bytes are served by GET /v1/images/{id}). */
export const Image = Type.Object(
  {
    id: Type.String({ pattern: IMAGE_ID_PATTERN, description: '`img_` followed by 32 hex digits.' }),
    session_id: Uuid,
    filename: Type.String(),
    content_type: Type.String({ description: 'image/png, image/jpeg, image/gif or image/webp, from the magic bytes.' }),
    size_bytes: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
  },
  { $id: 'Image' },
);

/** The multipart form of POST /v1/images (documentation; the handler parses the parts). */
export const ImageUploadForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'PNG, JPEG, GIF or WebP.' }),
    session_id: Type.String({ format: 'uuid', description: 'The session the image belongs to (also accepted as ?session_id=).' }),
  },
  { $id: 'ImageUploadForm' },
);

export const ImageIdParams = Type.Object({ id: Type.String({ pattern: IMAGE_ID_PATTERN }) });
export const ImageUploadQuery = Type.Object({ session_id: Type.Optional(Uuid) });

export const imageSchemas = [Image, ImageUploadForm];
