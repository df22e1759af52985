/**
 * Images referenced by `image_file` message parts (spec 4.2: uploaded first through
 * POST /v1/images, in the caller's organisation). The images module implements this port;
 * until it is wired, no image exists, so messages with image parts get 404.
 */
import type { LlmImagePart } from '../src/llm/index.js';

export interface ImageSource {
  /** True when the image exists in the organisation. */
  exists(orgId: string, imageId: string): Promise<boolean>;
  /** The image as an inline LLM part, or null when it is gone. */
  load(orgId: string, imageId: string): Promise<LlmImagePart | null>;
}

export const noImages: ImageSource = {
  exists: async () => false,
  load: async () => null,
};
