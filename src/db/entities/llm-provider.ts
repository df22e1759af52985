import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

export type LlmProviderTypeValue = 'openai' | 'openai_completions' | 'anthropic' | 'gemini' | 'llmsim';

/**
 * An LLM provider of one organisation (spec 2.6). `api_key_encrypted` is an envelope
 * (src/crypto) sealed for (organisation, this row, `llm_provider.api_key`); the plain key is
 * never stored and never leaves the providers module.
 */
export const LlmProviderEntity = defineEntity({
  name: 'LlmProvider',
  tableName: 'llm_providers',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    name: p.text(),
    provider_type: p.string().$type<LlmProviderTypeValue>(),
    api_key_encrypted: p.text(),
    base_url: p.text().nullable(),
    last_synced_at: p.datetime().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
