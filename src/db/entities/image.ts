import { defineEntity, p } from '@mikro-orm/core';

/** An uploaded image (`img_` + 32 hex), owned by an organisation and tied to a session. */
export const Image = defineEntity({
  name: 'Image',
  tableName: 'images',
  properties: {
    id: p.text().primary(),
    organization_id: p.uuid(),
    session_id: p.uuid(),
    user_id: p.uuid(),
    filename: p.text(),
    content_type: p.text(),
    size_bytes: p.integer(),
    sha256: p.text(),
    content: p.blob().lazy(),
    created_at: p.datetime().onCreate(() => new Date()),
  },
});
