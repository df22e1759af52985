/**
 * Images referenced by `image_file` message parts (spec 4.2: uploaded first through
 * POST /v1/images, in the caller's organisation). The session storage implements this port.
 */
import type { LlmImagePart } from '../llm/index.js';

export interface ImageSource {
  /** The session the image was uploaded to, or null when the organisation has no such image. */
  sessionOf(orgId: string, imageId: string): Promise<string | null>;
  /** The image as an inline LLM part, or null when it is gone. */
  load(orgId: string, imageId: string): Promise<LlmImagePart | null>;
}
