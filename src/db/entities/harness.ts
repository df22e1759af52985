import { defineEntity, p } from '@mikro-orm/core';
import type { CapabilityItemInput } from '../../../schemas/capabilities.js';
import { newId } from '../../ids.js';

export type HarnessStatus = 'active' | 'archived';

/**
 * A harness: the base environment of a session (system prompt, capabilities, model default).
 * Built-in harnesses have no organisation (`organization_id` null) and are shared by all;
 * custom ones belong to one organisation.
 */
export const Harness = defineEntity({
  name: 'Harness',
  tableName: 'harnesses',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().nullable().index(),
    name: p.text(),
    description: p.text().nullable(),
    system_prompt: p.text(),
    capabilities: p.json<CapabilityItemInput[]>(),
    default_model_id: p.uuid().nullable(),
    max_iterations: p.integer().nullable(),
    status: p.string().$type<HarnessStatus>(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
