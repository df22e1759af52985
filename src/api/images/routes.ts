import { Image, ImageIdParams, ImageUploadForm, ImageUploadQuery } from '../../../schemas/images.js';
import { route, type Route } from '../../http/index.js';
import { storedContentHeaders } from '../../http/index.js';
import type { ImageService } from './service.js';
import { ErrorResponse, ref } from '../../../schemas/common.js';

const tags = ['images'];
const err = ref(ErrorResponse);
/** Room for the multipart framing around the largest accepted image. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** Image upload for `image_file` message parts (spec 4.2). */
export function imageRoutes({ images }: { images: ImageService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/images',
        auth: 'user',
        summary: 'Upload an image (multipart: file, session_id)',
        tags,
        bodyKind: 'multipart',
        maxBodyBytes: images.maxBytes + MULTIPART_OVERHEAD_BYTES,
        schema: {
          query: ImageUploadQuery,
          body: ref(ImageUploadForm),
          response: { 201: ref(Image), 404: err, 413: err, 415: err },
        },
      },
      async ({ rawBody, headers, query }, { principal }) => {
        return { status: 201, body: await images.upload(principal, rawBody, headers['content-type'], query.session_id) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/images/:id',
        auth: 'user',
        summary: 'The image bytes',
        tags,
        schema: { params: ImageIdParams, response: { 200: 'image/*', 404: err } },
      },
      async ({ params }, { principal }) => {
        const { record, data } = await images.load(principal, params.id);
        return {
          status: 200,
          raw: data,
          contentType: record.content_type,
          headers: { 'Cache-Control': 'private, max-age=86400, immutable', ...storedContentHeaders(record.content_type, record.filename) },
        };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/images/:id',
        auth: 'user',
        summary: 'Delete an image',
        tags,
        schema: { params: ImageIdParams, response: { 204: null, 404: err } },
      },
      async ({ params }, { principal }) => {
        await images.remove(principal, params.id);
        return { status: 204 };
      },
    ),
  ];
}
