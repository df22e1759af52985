import type { CapabilityItemInput } from '../../../schemas/capabilities.js';

import { GENERIC_HARNESS_ID } from '../../../schemas/harnesses.js';

/** The built-in `generic` harness: the default for sessions created from an agent only (its id is public: agent views carry it). */
export { GENERIC_HARNESS_ID };
/** The built-in `platform-chat` harness of each user's global chat session. */
export const PLATFORM_CHAT_HARNESS_ID = '00000000-0000-4000-8000-000000000002';

export interface BuiltInHarness {
  id: string;
  name: string;
  description: string;
  system_prompt: string;
  capabilities: CapabilityItemInput[];
}

/**
 * Shared by every organisation and read-only through the API. Written at start (insert or
 * update when the definition changed), so the rows always match this code.
 */
export const BUILT_IN_HARNESSES: readonly BuiltInHarness[] = [
  {
    id: GENERIC_HARNESS_ID,
    name: 'generic',
    description: 'A neutral base for sessions created from an agent: no capabilities of its own, the agent decides.',
    system_prompt: [
      'You are an AI agent working in a session on behalf of a user.',
      'Follow the agent instructions below. Use the tools you are given when they help, check their results,',
      'and say plainly when you cannot do something rather than guessing.',
    ].join(' '),
    capabilities: [],
  },
  {
    id: PLATFORM_CHAT_HARNESS_ID,
    name: 'platform-chat',
    description: 'The assistant of the global chat session: answers questions about the platform and helps design agents.',
    system_prompt: [
      'You are the assistant of an agent platform, chatting with one of its users.',
      'Help them with their questions and tasks, and with designing agents: system prompts, capabilities and client tools.',
      'Keep answers concise; use the session files for longer drafts and the todo list to plan multi-step work.',
    ].join(' '),
    capabilities: ['current_time', 'session_file_system', 'stateless_todo_list'],
  },
];
